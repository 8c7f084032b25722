"""Stage ``document_extraction``: LLM-found reference edges between chunks (paper App. "Graph generation").

The LLM sees one node and the table of contents and may ask to read other nodes first (``read_nodes``); it then
lists the nodes the text refers to, explicitly or implicitly. Unknown ids, self references and the node's own
parent or children are sent back to it by the repair loop. With config ``references.governing_rules`` each node
is also asked, in a request of its own (stage ``governing_rules``, :class:`GoverningAnswer`), which tools its rules
govern wherever they are called; the graph stores them (``Chunk.governs``) and the pipeline shows such a node to
every sample whose tools it governs. The references requests are the same with or without the key, so a run that
switches it on keeps the graph, and the samples, of the recording it continues.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from mantra_env.errors import did_you_mean
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import GoverningAnswer, ReferenceAnswer
from mantra_env.generators.document import DocumentGraph, Edge
from mantra_env.generators.exchange import gather_all
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.tools import ToolSpec

MAX_READS = 3


class ReferencesCheck(AnswerCheck[ReferenceAnswer]):
    """Stage ``document_extraction``: node ids must exist, and not be the node itself, its parent or children."""

    node_id: str
    known: list[str]
    related: list[str]

    def output(self) -> type[ReferenceAnswer]:
        return ReferenceAnswer

    def check(self, value: ReferenceAnswer) -> ReferenceAnswer:
        problems = []
        for wanted in [*value.read_nodes, *(ref.target for ref in value.references)]:
            if wanted not in self.known:
                hint = did_you_mean(wanted, self.known) or "ids look like c03"
                problems.append(f"{wanted!r} is not a node id; {hint}")
        for ref in value.references:
            if ref.target == self.node_id:
                problems.append(f"{ref.target} is this node itself; list only other nodes")
            elif ref.target in self.related:
                problems.append(f"{ref.target} is this node's parent or child; hierarchy is already known")
        if problems:
            raise RepairNeeded.listing(problems)
        return value

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema whose read_nodes and reference targets are node ids of the table of "
            f"contents, other than {self.node_id} itself and its parent or children ({', '.join(self.related) or '-'})"
        )


class GoverningCheck(AnswerCheck[GoverningAnswer]):
    """Stage ``governing_rules``: ``governs`` names tools of the domain."""

    tool_names: list[str]

    def output(self) -> type[GoverningAnswer]:
        return GoverningAnswer

    def check(self, value: GoverningAnswer) -> GoverningAnswer:
        problems = []
        for tool in value.governs:
            if tool not in self.tool_names:
                hint = did_you_mean(tool, self.tool_names) or "tools: " + ", ".join(self.tool_names)
                problems.append(f"governs names {tool!r}, which is not a tool; {hint}")
        if problems:
            raise RepairNeeded.listing(problems)
        return value

    def statement(self) -> str:
        return "one JSON object fitting the schema whose governs lists only tool names of the list"


async def find_references(
    client: LLMClient,
    graph: DocumentGraph,
    parallel: int = 3,
    on_node: Callable[[int, int], None] | None = None,
    governing_tools: Sequence[ToolSpec] | None = None,
) -> DocumentGraph:
    """The graph with the reference edges the LLM finds for every node; ``on_node(done, total)`` after each. With
    ``governing_tools`` (config ``references.governing_rules``) each node also names which of them its rules
    govern wherever they are called (``Chunk.governs``)."""
    limit = asyncio.Semaphore(parallel)
    toc = graph.toc()
    finished = [0]

    async def one(node_id: str) -> tuple[list[Edge], list[str]]:
        async with limit:
            found = await _node_references(client, graph, toc, node_id, governing_tools)
        finished[0] += 1
        if on_node is not None:
            on_node(finished[0], len(graph.nodes))
        return found

    found = await gather_all(one(node.id) for node in graph.nodes)  # a pending node does not stop the others
    linked = graph.with_references([edge for edges, _ in found for edge in edges])
    governs = {node.id: tools for node, (_, tools) in zip(graph.nodes, found, strict=True) if tools}
    return linked.with_governs(governs) if governs else linked


async def _node_references(
    client: LLMClient, graph: DocumentGraph, toc: str, node_id: str, governing_tools: Sequence[ToolSpec] | None
) -> tuple[list[Edge], list[str]]:
    node = graph.node(node_id)
    related = sorted(nid for nid in {node.parent, *node.children} if nid is not None)
    check = ReferencesCheck(node_id=node_id, known=[n.id for n in graph.nodes], related=related)
    extra: dict[str, str] = {}
    answer = await client.generate(
        "document_extraction", node_id, prompts.references(node_id, node.text, toc, extra), check
    )
    reads = 0
    while answer.read_nodes and not answer.references and reads < MAX_READS:
        reads += 1
        extra.update({nid: graph.node(nid).text for nid in answer.read_nodes if nid != node_id})
        answer = await client.generate(
            "document_extraction", f"{node_id}/read{reads}", prompts.references(node_id, node.text, toc, extra), check
        )
    edges = [
        Edge(source=node_id, target=ref.target, kind="reference", explicit=ref.explicit, note=ref.reason)
        for ref in answer.references
    ]
    if governing_tools is None:
        return edges, []
    names = [spec.name for spec in governing_tools]
    ruled = await client.generate(
        "governing_rules",
        node_id,
        prompts.governing_rules(node_id, node.text, toc, governing_tools),
        GoverningCheck(tool_names=names),
    )
    return edges, [name for name in names if name in ruled.governs]  # the domain's tool order, no duplicates
