"""A shipped suite's version changes whenever its cases do: each (suite, version) pins the digest of its cases.

When this fails because you changed a suite's cases: bump ``version`` in its source (or generation config),
rebuild it, and add the new (version, digest) pair below; keep the old pairs (a version names one set of cases).
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env.case import cases_digest, load_suite
from mantra_env.domains import find_suite
from mantra_env.registration import catalog

PINNED: dict[str, dict[int, str]] = {
    "airline/generated": {
        0: "7aca987d47f18ad21add1679f3e4713a2ff62a6e6e8a8a66c8335b743b20d73e",
        1: "b9f37b90f760cfc1aabb755e2585c0ec0c0fc81585bc3c559298b154c1cfd137",
    },
    "operations/starter": {0: "e84e5a8ccb53e5e4ac2da9bf909a2e5c28632991b4d7cefe913bc602d3783778"},
    "operations/generated": {
        0: "56cba1e362a14665ce2388b8cbe1c3692f30f295067b8e63f5580793d807c939",
        1: "bcd3baec374d476091d665db360c61b64d1e33a2152ebdbc543746a26e456965",
    },
    "retail/generated": {
        0: "6f107bea2f81481a55011425cd839365d2ee0088c087f9e33fc6bfac06042f12",
        1: "39c168e5473a185a562c58b165fe2bb334fab2f221fb5041a099415f8ac98ec1",
        2: "408e39483735261077ec0ba60516dbb1fa91f8af74d621c8520352f8ffc10171",
        3: "fef5f378ca2fccf0dd2c2debda04e168613d2f16b0db49570a8629828aed169f",
        4: "6cc9abcd7eba61cc5f88690b5a02afdcda1ac47a7d6b3c035eccceed43d95b79",  # the re-audit (issue 33)
        5: "4e6b2d43273e1414752768c3c52f430ce3075719be9490f4a841c9426ab04a68",  # 28 samples more (issue 33)
        6: "b4f4f1beed9114e95b78c55cc839a8052b8d9954da86dd4fc74c39102d15ac0b",  # answer checks on declines (issue 33)
    },
    "telecom/generated": {
        0: "61beb6d2f014c5a8cec72df19a9c9f91e63e914eef0347d10f482ae6954d6d3a",
        1: "79b74a6dcdaf589b78008b28ab48b56c9b09199fe4371927fe222e4a0c71240d",
    },
}
ENTRIES = catalog()[0]


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry.run_name for entry in ENTRIES])
def test_each_shipped_suite_version_names_one_set_of_cases(entry: object) -> None:
    from mantra_env.domains.discovery import SuiteEntry

    assert isinstance(entry, SuiteEntry)
    digest = cases_digest(load_suite(entry.folder).cases)
    pins = PINNED.get(entry.run_name, {})
    assert entry.version in pins, f"{entry.run_name} v{entry.version} is not pinned: add {entry.version}: {digest!r}"
    assert pins[entry.version] == digest, f"{entry.run_name}'s cases changed: bump its version (now {entry.version})"
    assert load_suite(entry.folder).manifest.cases_digest == digest  # the file is what the manifest says


def test_the_default_suite_answers_to_the_domain_name_in_the_cli_and_gymnasium() -> None:
    domain, by_domain = find_suite("operations")
    assert domain is not None and domain.default_suite == "starter"
    assert by_domain.manifest == find_suite("operations/starter")[1].manifest
    for identifier in ("mantra/operations-v2", "operations/starter-v2"):
        suite = gym.make(identifier).unwrapped.suite  # type: ignore[attr-defined]
        assert suite.manifest == by_domain.manifest and [c.id for c in suite.cases] == [c.id for c in by_domain.cases]


def test_an_old_version_is_answered_with_the_current_one() -> None:
    with pytest.raises(gym.error.Error, match=r"`mantra/operations` .* provides versioned environments: \[ `v2` \]"):
        gym.make("mantra/operations-v7")
