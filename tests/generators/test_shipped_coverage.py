"""Every shipped generated suite covers its whole manual: each section with text is some case's sample chunk.

The chunks are the pipeline's own (``chunk_manual`` with the domain's ``generation.yaml`` settings) and a
section counts as covered when one of the suite's cases was generated from a sample that contains it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.case import load_suite
from mantra_env.domains import domain_names, load_domain
from mantra_env.generators.pipeline import chunk_manual
from mantra_env.generators.regenerate import replay_config, shipped_generated
from mantra_env.generators.sampling import eligible_nodes


@pytest.mark.parametrize("domain", shipped_generated(domain_names()))
def test_every_section_of_the_manual_is_a_sample_chunk_of_some_case(domain: str, tmp_path: Path) -> None:
    folder = load_domain(domain).folder
    assert folder is not None
    config = replay_config(folder, tmp_path)
    graph = chunk_manual(config)
    suite = load_suite(folder / "suites" / config.export.suite_name)
    covered = {chunk for case in suite.cases for chunk in case.sample_chunk_ids}
    sections = eligible_nodes(graph)
    missing = [f"{c} {graph.node(c).title!r}" for c in sections if c not in covered]
    assert len(sections) >= 8
    assert not missing, f"{domain}: no case covers {missing}"
