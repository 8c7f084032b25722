"""The prompts of the generation stages: pure functions from typed inputs to chat messages.

Each stage's answer format is its pydantic model in :mod:`mantra_env.generators.artifacts`; the LLM client appends that
model's JSON schema to the system message, so the texts here explain meaning, not syntax of the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from mantra_env.checks.operators import prompt_section
from mantra_env.tools import ToolSpec

if TYPE_CHECKING:
    from mantra_env.generators.artifacts import Outcome

Messages = list[dict[str, str]]


def check_language(answer_checks: bool = False) -> str:
    """The check language the prompts explain; with ``answer_checks`` (config ``checks.answer_checks``) it also
    explains ANSWER checks."""
    # The operator table of mantra_env.checks.operators, also behind the semantics' docstring.
    return "Check language (one check per string):\n" + prompt_section(answer_checks) + _CHECK_VALUES


ANSWER_CHECKS = (
    "When the customer asks to be told something (flight times, a balance, an order's status), add one ANSWER "
    "check per fact the agent must tell them: the read that returns it, the path into that read's JSON result "
    "and the fact's kind (date, time, money, number, identifier, enum; never free text such as a name or an "
    "address). Leave out the expected value: the pipeline reads it from the database. Set asks_for_information "
    "to true exactly when the request asks to be told facts."
)

_CHECK_VALUES = """
Argument values are JSON literals: "text", 12, 2.5, true, ["a", "b"], {"k": 1}. Pin only values the scenario fixes
(ids, quantities, codes, enum values); do not pin free text such as a reason or a summary. An address the
scenario states is not free text: pin every one of its fields (a wrong street with the right zip is a wrong address).
A pinned list matches a call whose list has the same elements, each as often, in any order (item_ids=["a", "b"]
matches ["b", "a"], not ["a"] or ["a", "b", "b"]). Parameters marked "paired by position" (item_ids and
new_item_ids of an exchange) are compared together: a call matches if it pairs the same elements, in any order of
the pairs. Pin both lists in the scenario's pairing."""

CHECK_LANGUAGE = check_language()

DSL_LANGUAGE = """\
World-model DSL (S-expressions):
  (model
    (const NAME TYPE VALUE) ...            constants
    (var NAME TYPE) ...                     state variables
    (transition TOOL                        one per tool that matters
      (params (TOOL_ARG local) ...)         bind tool arguments to local names
      (pre EXPR ...)                        must hold before the call (all of them)
      (post EXPR ...)))                     relate the state after the call: (= (next VAR) EXPR)
  Types: Int Real Bool String (Enum "A" "B") (Record (field TYPE) ...) (Array TYPE) (List TYPE).
  Expressions: true false 3 2.5 "text" VAR (param local) (next VAR) (field EXPR name) (contains ARRAY EXPR)
    (= a b) (< a b) (<= a b) (> a b) (>= a b) (+ a b) (- a b) (* a b) (/ a b) (and ...) (or ...) (not a) (=> a b)
  Lists: a tool's array parameter is a (List T) (an array of objects: a List of Records); a list constant is
    (const ITEMS (List String) ("a" "b")); a literal is (list "a" "b"). On a list L: (contains L x) (length L)
    (empty L) (sum L) (subset L S) (every element of L is in the list or array S); (field L f) is the list of the
    elements' f (e.g. (sum (field (param pays) amount))). On a List of Records, contains and subset compare whole
    records, every field: (subset (param pax) STATED_PAX) with (const STATED_PAX (List (Record (name String)
    (dob String))) (((name "Ann") (dob "1990-01-02")))) pins which name goes with which birth date, which
    subsets of separate fields cannot. Lists are never compared with =. State collections are
    (Array T) variables, updated with (union A L) and (difference A L):
    (= (next returned) (union returned (param items))) says "these items are now returned". A list-valued
    scenario variable (e.g. item_ids) is an (Array T) state variable: its scenario value is its initial set.
  A variable not set by (next VAR) in a postcondition keeps its value. Goals are expressions over the state
  variables that the final state of a compliant run satisfies. When the right outcome is a refusal, the goal also
  says what the run must have read to decide (e.g. order_checked): otherwise nothing tells a compliant refusal
  from a blind one. A set cannot tell ("a") from ("a" "a"): where the exact list matters, also record its length
  (= (next returned_count) (length (param items))) and put the count in the goal.
  A fact a scenario does not state is unknown to the agent: no argument can equal it. Compare every argument a
  rule constrains with the scenario's value (an identity lookup by name and zip compares all three)."""


ARGUMENT_SENSITIVE = """\
Effects must depend on the arguments: a write's postcondition records progress only when the call names the \
scenario's record, e.g. (= (next cancelled) (or cancelled (= (param oid) order_id))), never (= (next cancelled) \
true). A model whose effects ignore which record a call names lets a call on the wrong order reach the goal, so \
an audit of the rules would find every rule that names the scenario's order needless."""

SINGLE_TURN = """\
Episodes are single-turn: the agent reads the scenario prompt once and works with the tools alone; nobody answers \
its questions. A rule that needs a live customer (an explicit confirmation, identity details, what the customer \
reports or chooses) is satisfied by what the prompt states: write those statements into the prompt (e.g. "I \
confirm the cancellation", the customer's email and zip code, the reason they give) and record them as internal \
variables. Never assume a tool for the purpose (no confirm or ask-the-customer tool): only the listed tools exist."""


def _param_type(prop: dict[str, object]) -> str:
    """``string``, ``array[string]``, ``array[{payment_id: string, amount: number}]``."""
    items = prop.get("items")
    if prop.get("type") != "array" or not isinstance(items, dict):
        return str(prop.get("type", "any"))
    fields = items.get("properties")
    if items.get("type") == "object" and isinstance(fields, dict):
        inner = ", ".join(f"{k}: {v.get('type', 'any') if isinstance(v, dict) else 'any'}" for k, v in fields.items())
        return f"array[{{{inner}}}]"
    return f"array[{items.get('type', 'any')}]"


def tool_block(tools: Sequence[ToolSpec]) -> str:
    """The tools as the prompts show them: name, kind, description and parameters."""
    lines = []
    for spec in tools:
        params = ", ".join(
            f"{name}: {_param_type(prop)}{'' if name in spec.required else '?'}"
            + (f" {json.dumps(prop['enum'])}" if "enum" in prop else "")
            + (" paired by position" if spec.ordered(name) else "")
            for name, prop in spec.properties.items()
        )
        lines.append(
            f"- {spec.name}({params}) [{spec.kind}]: {spec.description.splitlines()[0] if spec.description else ''}"
        )
    return "\n".join(lines)


def references(node_id: str, node_text: str, toc: str, extra: dict[str, str]) -> Messages:
    read = "".join(f"\n\n--- node {nid} ---\n{text}" for nid, text in extra.items())
    return [
        {
            "role": "system",
            "content": "You map a procedural manual's cross-references. Given one node (a chunk of the manual) and "
            "the table of contents, list the other nodes this node refers to: explicit references (it names a "
            "section, a procedure or a tool defined elsewhere) and implicit ones (it depends on a rule, state or "
            "term defined in another node). A node that describes an action also depends on the manual's general "
            "rules that apply to every action (identity verification, confirmation, reading the record before "
            "changing it, one change per request): list the nodes that state them. Do not list the node's own "
            "parent or children. If you need to read other nodes to decide, answer only with read_nodes first.",
        },
        {
            "role": "user",
            "content": f"Table of contents:\n{toc}\n\nNode {node_id}:\n{node_text}{read}",
        },
    ]


def governing_rules(node_id: str, node_text: str, toc: str, tools: Sequence[ToolSpec]) -> Messages:
    """Which tools one node's rules govern wherever they are called (stage ``governing_rules``, config
    ``references.governing_rules``)."""
    listing = "\n".join(f"- {spec.name} ({spec.kind}): {spec.description}" for spec in tools)
    return [
        {
            "role": "system",
            "content": "You read one node (a chunk) of a procedural manual and say which tools its rules govern "
            "wherever in the manual they are called (`governs`). A node whose rules apply to a class of actions, "
            "not only to its own procedure (verifying identity before any change, confirming before any write, "
            "when to hand off or decline, steps every order or ticket needs), lists the tools of that class, even "
            "when the procedures that call them never mention this node. A node whose rules apply only to its own "
            "procedure, or that states no rule, leaves `governs` empty. Use only tool names from the list; say "
            "briefly why in `reason`.",
        },
        {"role": "user", "content": f"Table of contents:\n{toc}\n\nNode {node_id}:\n{node_text}\n\nTools:\n{listing}"},
    ]


def tool_relevance(excerpt: str, tools: Sequence[ToolSpec]) -> Messages:
    return [
        {
            "role": "system",
            "content": "You decide which tools an agent needs to follow the procedures in an excerpt of a manual. "
            "Include the tools the excerpt names or clearly implies (look-ups that its rules depend on, and the "
            "tools that record outcomes), and the tools its general rules need: finding and verifying the "
            "customer, reading the record before changing it. Use only tool names from the list.",
        },
        {"role": "user", "content": f"Excerpt:\n{excerpt}\n\nTools:\n{tool_block(tools)}"},
    ]


def outcome_mix_text(mix: Mapping[Outcome, float]) -> str:
    """The scenario writer's instruction for config ``scenarios.outcome_mix``."""
    shares = ", ".join(f"{round(share * 100)} % {outcome}" for outcome, share in mix.items())
    return (
        f" Aim for this mix of intended outcomes across the scenarios: {shares}. An action scenario ends with the "
        "agent making the requested change as the manual allows; a refusal scenario is one the manual has the "
        "agent decline (after the reads its rules need); an information scenario asks only to be told facts the "
        "agent can look up. Give each scenario's intended `outcome`."
    )


def scenarios(
    excerpt: str,
    tools: Sequence[ToolSpec],
    count: int,
    database: str,
    bindings: str,
    existing: Sequence[str],
    outcome_mix: Mapping[Outcome, float] | None = None,
) -> Messages:
    """The scenario writer's request; ``outcome_mix`` (config ``scenarios.outcome_mix``) asks for that mix."""
    avoid = "".join(f"\n- {prompt}" for prompt in existing)
    mix = outcome_mix_text(outcome_mix) if outcome_mix else ""
    return [
        {
            "role": "system",
            "content": f"You write {count} distinct test scenarios for an agent that must follow a manual's "
            "procedures using tools over a database. Each scenario is a realistic user request that exercises "
            "the rules in the excerpt, with specific named entities and exact numbers taken from the database. "
            "Give the valuation of the scenario variables: `external` ones are facts the agent can look up with "
            "tools (they must be true in the database, or made true by `database_patch`); `internal` ones are "
            "facts not in the database, and each must be stated in the prompt. Also give `argument_bindings`: "
            "the argument values a compliant agent would pass for free-form arguments (addresses, ids). Every fact "
            "a rule of the excerpt depends on and the agent can look up (the order's owner and status, prices, "
            "totals, balances, availability, the ids of payment methods and items) is an external variable, "
            "named as in the conventions when they name it. A variable has one type in all scenarios (a list "
            "stays a list even with one element). Vary which branch of the procedure each scenario takes, and "
            "use the records given (different samples see different records). " + SINGLE_TURN + mix,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nTools:\n{tool_block(tools)}\n\n"
            f"Database records (a selection; each line is `collection.key: record`, and database_patch paths start "
            f"with the same `collection.key`):\n{database}"
            + (f"\n\nScenario variable conventions:\n{bindings}" if bindings else "")
            + (f"\n\nScenarios already written for other excerpts (do not repeat):{avoid}" if existing else ""),
        },
    ]


def checks(excerpt: str, tools: Sequence[ToolSpec], scenario: str, answer_checks: bool = False) -> Messages:
    """The check writer's request; ``answer_checks`` (config ``checks.answer_checks``) adds ANSWER checks."""
    language = check_language(True) + "\n\n" + ANSWER_CHECKS if answer_checks else CHECK_LANGUAGE
    return [
        {
            "role": "system",
            "content": "You write the trace-level checks that decide whether an agent's tool-call trace for a "
            "scenario complies with a manual excerpt. A compliant trace must satisfy every check; a non-compliant "
            "one must fail at least one. Cover required calls, forbidden calls and the ordering between dependent "
            "calls, with arguments grounded in the scenario's values. When the manual refuses what the customer "
            "confirmed, forbid the action itself (NO-CALL tool()), not only the refused terms: the customer "
            "confirmed nothing else. A check that another check already implies adds nothing (a pinned NO-CALL "
            "beside the bare one, a CALL that a PRECEDES of the same call requires anyway). `CALL x() AFTER CALL "
            "y()` holds when x is never called: to require a call in an order, use PRECEDES or FOLLOWS. "
            "The manual's general rules bind every scenario: a step it requires before anything else (identifying "
            "the customer) comes before the first call that depends on it, reads included (CALL "
            "find_customer(...) PRECEDES CALL get_order(...)), not only before the write. A confirmed action is "
            "taken once and whole: where a partial or repeated write would use up or duplicate it, forbid it "
            "(NO-CALL x() BEFORE CALL x(...the confirmed call...), NO-CALL x() AFTER CALL x(...))."
            " A refusal is a trace too: require the reads the decision rests on (the record whose state or terms "
            "decide it), forbid the refused write and every write the customer's request could be turned into "
            "(a cancellation instead of a refused change, a partial change), and, where the manual declines what "
            "its rules do not allow rather than handing it over, forbid the hand-off to a human as well. A "
            "request the manual allows needs the same care: the write with the scenario's arguments, the reads "
            "its rule checks before it, and no write the customer did not ask for. Write one check per rule the "
            "trace must respect; a short check set that leaves a manual step unchecked lets a non-compliant "
            "trace pass."
            "\n\n" + language,
        },
        {"role": "user", "content": f"Excerpt:\n{excerpt}\n\nTools:\n{tool_block(tools)}\n\nScenario:\n{scenario}"},
    ]


def schema_prepass(excerpt: str, tools: Sequence[ToolSpec], scenarios_text: str) -> Messages:
    return [
        {
            "role": "system",
            "content": "You model a manual excerpt as a state-transition system. First pass: declare only the "
            "state variables and constants. Include (1) every scenario variable the rules depend on, with the "
            "scenarios' names and types, and (2) the model's own progress variables (what has been checked, "
            "created, recorded), with their initial values in `initial`.\n\n" + DSL_LANGUAGE,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nTools:\n{tool_block(tools)}\n\n"
            f"Scenarios (variables):\n{scenarios_text}",
        },
    ]


def full_pass(excerpt: str, tools: Sequence[ToolSpec], scenarios_text: str, declarations: str) -> Messages:
    return [
        {
            "role": "system",
            "content": "You model a manual excerpt as a state-transition system in the DSL below. Write the whole "
            "model: the declarations given (extend them if needed) and one transition per relevant tool, whose "
            "preconditions carry the excerpt's ordering and branch rules and whose postconditions record progress "
            "for calls with the scenario's arguments. Give `initial` values for the model's own variables and, "
            "per scenario id, the goal a compliant run reaches.\n\n" + ARGUMENT_SENSITIVE + "\n\n" + DSL_LANGUAGE,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nTools:\n{tool_block(tools)}\n\nScenarios:\n{scenarios_text}\n\n"
            f"Declarations from the first pass:\n{declarations}",
        },
    ]


_EDITS = (
    "Edits are typed (op: add_condition / remove_condition / replace_condition with tool, section pre|post, index, "
    "expr; add_var / change_var / remove_var; add_const / change_const / remove_const; add_transition; "
    "add_goal / replace_goal / remove_goal with expr and index, for the scenario's goal; "
    "add_check / replace_check / remove_check with the check text and id). Indices are 0-based."
)


def judge_scope(tools: Sequence[ToolSpec]) -> str:
    """The rules every judge of a sample is given with config ``validation.judge_scope_rules`` (appended to its
    system message; empty without the key, so older recordings replay): the sample's scenarios share one world
    model, a judge's edit binds them all, and an order of reads needs a rule of the manual, which the domain's
    whole tool list lets the judge check (retail v5's s068-2 got a check that the order be read before the product,
    from a premise that no other tool yields the product id; list_all_product_types does)."""
    return (
        "\n\nScope of your edits:\n"
        "- The world model is shared by every scenario of this sample; the scenario shown is one of them. An edit to "
        "the world model binds them all: make it only for a rule the excerpt states for every such request, never "
        "for what one customer says or one scenario needs. A condition of the world model that serves another "
        "scenario is no reason to add a check to this one.\n"
        "- A check you add or keep enforces a rule the excerpt states: quote it in your reason. Reads may come in "
        "any order the tools allow: never require one read before another because it supplies an identifier when "
        "another tool of the domain also yields it (all the domain's tools are listed below).\n"
        "- When the excerpt is silent, relax rather than tighten: a check that fails a correct agent is as wrong as "
        "one that passes a wrong agent.\n\n"
        "The domain's tools:\n" + tool_block(tools)
    )


def world_model_repair(excerpt: str, model: str, conflicts: str, scope: str = "") -> Messages:
    return [
        {
            "role": "system",
            "content": "You are the judge of a cross-validation loop. An SMT solver found traces that satisfy a "
            "scenario's checks but violate the world model (a precondition of a tool, or the goal). Decide whether "
            "these conflicts share one defect in the WORLD MODEL (e.g. a precondition the manual does not "
            "require, a missing postcondition). If so, answer locus world_model with the edits of one shared "
            "repair. If the world model is right and the checks are too weak, answer locus checks with no edits.\n\n"
            + _EDITS
            + "\n\n"
            + DSL_LANGUAGE
            + scope,
        },
        {"role": "user", "content": f"Excerpt:\n{excerpt}\n\nWorld model:\n{model}\n\nConflicts:\n{conflicts}"},
    ]


def check_resolution(
    excerpt: str, model: str, scenario: str, checks_text: str, witness: str, scope: str = ""
) -> Messages:
    return [
        {
            "role": "system",
            "content": "You are the judge of a cross-validation loop. The world model is taken as right for this "
            "conflict: the trace below satisfies the scenario's checks but violates the world model. Identify the "
            "checks responsible and answer locus checks with localized edits to those checks only (add a missing "
            "ordering or forbidden call, tighten or replace a check). Answer scenario_invalid if the scenario "
            "cannot be fixed.\n\n" + _EDITS + "\n\n" + CHECK_LANGUAGE + scope,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nWorld model:\n{model}\n\nScenario:\n{scenario}\n\n"
            f"Checks:\n{checks_text}\n\nConflicting trace:\n{witness}",
        },
    ]


def backward_audit(
    excerpt: str, model: str, scenario: str, checks_text: str, check_id: str, witness: str, scope: str = ""
) -> Messages:
    return [
        {
            "role": "system",
            "content": f"You are the judge of a backward audit. The world model admits the trace below, which "
            f"satisfies every check of the scenario except {check_id}. Either {check_id} is over-restrictive (the "
            "manual does not require it): answer locus checks with a remove_check (or replace_check) edit; or the "
            "world model is too permissive: answer locus world_model with the edits that forbid the trace, which "
            "includes a goal too weak to say what the manual makes a compliant run do even when nothing changes "
            "(a refusal still identifies the customer and reads the record it refuses: add_goal with the variable "
            "that records that read); or "
            "answer none if you cannot tell.\n\n" + _EDITS + scope,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nWorld model:\n{model}\n\nScenario:\n{scenario}\n\n"
            f"Checks:\n{checks_text}\n\nTrace rejected only by {check_id}:\n{witness}",
        },
    ]


def fix_edits(previous: str, error: str, model: str = "") -> Messages:
    """A rejected repair back to its judge; with ``model`` (config ``validation.fix_repair_shows_model``) also the
    world model and checks its edits apply to, so indices and names can be read, not taken on trust."""
    shown = f"\n\nThe world model and checks your edits apply to:\n{model}" if model else ""
    return [
        {
            "role": "system",
            "content": "Your edits could not be applied. Correct them and answer again with the whole repair.\n\n"
            + _EDITS
            + "\n\n"
            + DSL_LANGUAGE,
        },
        {"role": "user", "content": f"Your repair:\n{previous}\n\nWhy it was rejected:\n{error}{shown}"},
    ]


def mutation_audit(
    excerpt: str, model: str, scenario: str, checks_text: str, survivors: str, scope: str = ""
) -> Messages:
    """The mutation audit's judge (stage ``mutation_audit``, :mod:`mantra_env.generators.mutation_audit`): the plausible
    traces of one validated case that its verdict judges otherwise than the replay and the world model."""
    return [
        {
            "role": "system",
            "content": "You are the judge of a mutation audit. The traces below are small changes of a validated "
            "case's compliant trace (a read dropped, a write moved first, a stated argument swapped, a write "
            "added; reads permuted, an extra read, the other branch of an OR). For each, the replay and the world "
            "model say whether it is wrong or right, and the case's verdict (its checks, and no write the case "
            "never asks for) disagrees. Decide by the manual, not by either artifact: both were written from the "
            "same excerpt and may miss the same rule. Answer locus checks with edits that add or tighten a check "
            "the manual requires (so a wrong trace fails) or relax or remove one it does not (so a right trace "
            "passes); locus world_model with edits that add the step the manual requires to the model (and, in "
            "the same answer, the check that requires it) or remove a step it does not; locus none to declare "
            "the verdict right for every trace listed (say why in reason); or scenario_invalid if the case cannot "
            "be graded fairly. The world model speaks only of the tools it names: a trace judged right by it "
            "may still break a rule of the manual it leaves out, and an added write of a tool it does not name is "
            "not wrong by that alone. The edited case is validated again; edits that break it are dropped.\n\n"
            + _EDITS
            + "\n\n"
            + DSL_LANGUAGE
            + "\n\n"
            + CHECK_LANGUAGE
            + scope,
        },
        {
            "role": "user",
            "content": f"Excerpt:\n{excerpt}\n\nWorld model:\n{model}\n\nScenario:\n{scenario}\n\n"
            f"Checks:\n{checks_text}\n\nTraces the verdict misjudges:\n{survivors}",
        },
    ]
