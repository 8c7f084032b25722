"""Stage ``document_extraction``: LLM-found reference edges between chunks (paper App. "Graph generation").

The LLM sees one node and the table of contents and may ask to read other nodes first (``read_nodes``); it then
lists the nodes the text refers to, explicitly or implicitly. Unknown ids, self references and the node's own
parent or children are sent back to it by the repair loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from generators import prompts
from generators.artifacts import ReferenceAnswer
from generators.document import DocumentGraph, Edge
from generators.exchange import gather_all
from generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.errors import did_you_mean

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


async def find_references(
    client: LLMClient, graph: DocumentGraph, parallel: int = 3, on_node: Callable[[int, int], None] | None = None
) -> DocumentGraph:
    """The graph with the reference edges the LLM finds for every node; ``on_node(done, total)`` after each."""
    limit = asyncio.Semaphore(parallel)
    toc = graph.toc()
    finished = [0]

    async def one(node_id: str) -> list[Edge]:
        async with limit:
            edges = await _node_references(client, graph, toc, node_id)
        finished[0] += 1
        if on_node is not None:
            on_node(finished[0], len(graph.nodes))
        return edges

    found = await gather_all(one(node.id) for node in graph.nodes)  # a pending node does not stop the others
    return graph.with_references([edge for edges in found for edge in edges])


async def _node_references(client: LLMClient, graph: DocumentGraph, toc: str, node_id: str) -> list[Edge]:
    node = graph.node(node_id)
    related = sorted(nid for nid in {node.parent, *node.children} if nid is not None)
    check = ReferencesCheck(node_id=node_id, known=[n.id for n in graph.nodes], related=related)

    extra: dict[str, str] = {}
    answer = await client.generate(
        "document_extraction",
        node_id,
        prompts.references(node_id, node.text, toc, extra),
        check,
    )
    reads = 0
    while answer.read_nodes and not answer.references and reads < MAX_READS:
        reads += 1
        extra.update({nid: graph.node(nid).text for nid in answer.read_nodes if nid != node_id})
        answer = await client.generate(
            "document_extraction",
            f"{node_id}/read{reads}",
            prompts.references(node_id, node.text, toc, extra),
            check,
        )
    return [
        Edge(source=node_id, target=ref.target, kind="reference", explicit=ref.explicit, note=ref.reason)
        for ref in answer.references
    ]
