"""Domains outside the package: a folder on MANTRA_DOMAINS_PATH or an installed entry point is loaded, registered
with gymnasium, found by suite name, and reaches vector-env worker processes; default suites and conflicts."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import mantra_env
from mantra_env.agents.base import play
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.case import load_suite, write_suite
from mantra_env.domains import Domain, DomainError, domain_names, find_suite, load_domain
from mantra_env.domains.discovery import PATH_VARIABLE, domain_sources, suite_entries
from mantra_env.env import MantraEnv
from mantra_env.registration import register_shipped_suites

OPERATIONS = Path(mantra_env.__file__).parent / "domains" / "operations"
INIT = '''"""A user's domain: the operations desk's tools over its own folder."""
from pathlib import Path

from mantra_env.domains import Domain
from mantra_env.domains.operations import OperationsDatabase, OperationsToolkit

from .constants import NAME  # a relative import: the folder is imported as a package

DOMAIN = Domain.from_folder(Path(__file__).parent, NAME, OperationsToolkit, OperationsDatabase)
'''


def write_domain(
    root: Path, name: str = "desk", suites: tuple[str, ...] = ("basic",), default: str | None = "basic"
) -> Path:
    """A domain folder ``root/name`` outside the package, with suites made of the starter suite's cases."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(INIT, encoding="utf-8")
    (folder / "constants.py").write_text(f"NAME = {name!r}\n", encoding="utf-8")
    for file in ("manual.md", "db.json"):
        shutil.copy(OPERATIONS / file, folder / file)
    if default is not None:
        (folder / "domain.yaml").write_text(f"default_suite: {default}\n", encoding="utf-8")
    starter = load_suite(OPERATIONS / "suites" / "starter")
    for position, suite_name in enumerate(suites):
        cases = [case.model_copy(update={"domain": name}) for case in starter.cases[: 2 + position]]
        manifest = starter.manifest.model_copy(update={"name": suite_name, "domain": name, "case_count": len(cases)})
        write_suite(starter.model_copy(update={"manifest": manifest, "cases": cases}), folder / "suites" / suite_name)
    return folder


@pytest.fixture
def user_domains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_user_domains: None) -> Path:
    """``tmp_path/domains`` on MANTRA_DOMAINS_PATH."""
    root = tmp_path / "domains"
    root.mkdir()
    monkeypatch.setenv(PATH_VARIABLE, str(root))
    return root


def test_a_domain_folder_on_the_path_is_loaded_and_found_by_suite_name(user_domains: Path) -> None:
    write_domain(user_domains, suites=("basic", "more"))
    assert "desk" in domain_names() and {"operations", "retail"} <= set(domain_names())
    domain = load_domain("desk")
    assert isinstance(domain, Domain) and domain.default_suite == "basic"
    assert load_domain("desk") is domain  # imported once
    found, suite = find_suite("desk")
    assert found is domain and suite.manifest.name == "basic" and len(suite.cases) == 2
    assert find_suite("desk/more")[1].manifest.name == "more"


def test_a_user_domain_gets_gymnasium_ids_and_an_episode_runs(user_domains: Path) -> None:
    write_domain(user_domains, suites=("basic", "more"))
    ids = register_shipped_suites()
    assert {"mantra/desk-v2", "desk/basic-v2", "desk/more-v2"} <= set(ids)
    env = gym.make("mantra/desk-v2").unwrapped
    assert isinstance(env, MantraEnv) and env.suite.manifest.name == "basic"
    case = env.suite.cases[0].id
    assert play(env, OraclePolicy(), case)["verdict"].passed
    assert gym.make("desk/more-v2").unwrapped.suite.manifest.name == "more"  # type: ignore[attr-defined]


def test_the_path_reaches_vector_env_worker_processes(user_domains: Path) -> None:
    """Spawned workers start a fresh interpreter: they find the domain only through the inherited variable."""
    write_domain(user_domains)
    register_shipped_suites()
    vector = gym.make_vec(
        "mantra/desk-v2",
        num_envs=2,
        vectorization_mode="async",
        vector_kwargs={"context": "spawn", "shared_memory": False},
    )
    try:
        observations, _ = vector.reset(seed=0)
        assert len(observations) == 2 and all("Operations Desk" in json.loads(text)["system"] for text in observations)
    finally:
        vector.close()


def test_a_domain_with_no_suite_says_so_in_the_cli_and_gymnasium(user_domains: Path) -> None:
    write_domain(user_domains, default=None, suites=())
    register_shipped_suites()
    for make in (lambda: find_suite("desk"), lambda: gym.make("mantra/desk-v2")):
        with pytest.raises(DomainError, match="the desk domain has no suite yet"):
            make()


def test_a_domain_folder_itself_may_be_on_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_domain(tmp_path, name="solo")
    monkeypatch.setenv(PATH_VARIABLE, str(folder))
    try:
        assert [source.folder for source in domain_sources()["solo"]] == [folder.resolve()]
        assert load_domain("solo").name == "solo"
    finally:
        sys.modules.pop("mantra_user_domains.solo", None)


def test_an_installed_entry_point_names_a_domain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution declaring ``[mantra_env.domains] shop = shop_domain`` (as an installed package would)."""
    write_domain(tmp_path / "site", name="shop_domain", default=None, suites=())
    (tmp_path / "site" / "shop_domain" / "constants.py").write_text("NAME = 'shop'\n", encoding="utf-8")
    info = tmp_path / "site" / "shop_domain-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-domain\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[mantra_env.domains]\nshop = shop_domain\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        (source,) = domain_sources()["shop"]
        assert source.module == "shop_domain" and "shop-domain" in source.origin
        assert load_domain("shop").name == "shop"
        with pytest.raises(DomainError, match="the shop domain has no suite yet"):
            find_suite("shop")
    finally:
        sys.modules.pop("shop_domain", None)
        sys.modules.pop("shop_domain.constants", None)


def test_a_name_defined_twice_is_refused_naming_both_places(user_domains: Path) -> None:
    write_domain(user_domains, name="operations", suites=(), default=None)
    with pytest.raises(DomainError, match=r"domain 'operations' is defined 2 times: .*mantra-env.*MANTRA_DOMAINS_PATH"):
        load_domain("operations")
    with pytest.warns(UserWarning, match="defined 2 times"):
        ids = register_shipped_suites()  # import mantra_env must not fail on a user's folder
    assert "mantra/retail-v8" in ids and "mantra/operations-v2" not in ids


def test_a_domain_with_suites_but_no_default_says_how_to_declare_one(user_domains: Path) -> None:
    write_domain(user_domains, suites=("basic", "more"), default=None)
    with pytest.raises(
        DomainError, match=r"declares no default suite: name one \(desk/basic, desk/more\).*domain.yaml"
    ):
        find_suite("desk")
    assert find_suite("desk/more")[1].manifest.name == "more"
    assert not any(entry.default for entry in suite_entries(domain_sources()["desk"][0]))


def test_a_default_suite_that_does_not_exist_is_refused_when_asked_for(user_domains: Path) -> None:
    write_domain(user_domains, suites=("basic", "more"), default="missing")
    assert load_domain("desk").default_suite == "missing"  # declared before it is built: the domain still loads
    with pytest.raises(DomainError, match=r"no suite 'missing' \(the default_suite its domain.yaml declares\)"):
        find_suite("desk")


def test_a_manifest_naming_another_suite_is_refused(user_domains: Path) -> None:
    folder = write_domain(user_domains)
    (folder / "suites" / "basic").rename(folder / "suites" / "renamed")
    (folder / "domain.yaml").unlink()
    with pytest.raises(DomainError, match="names suite desk/basic, but its folder is desk/renamed"):
        suite_entries(domain_sources()["desk"][0])


def test_n9_a_bad_path_entry_disables_only_itself_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_user_domains: None
) -> None:
    root = tmp_path / "domains"
    write_domain(root, name="desk")
    write_domain(root, name="Bad-Name", suites=(), default=None)
    monkeypatch.setenv(PATH_VARIABLE, os.pathsep.join([str(tmp_path / "nowhere"), str(root)]))
    with pytest.warns(UserWarning) as caught:
        names = domain_names()
    assert {"desk", "operations", "retail"} <= set(names) and "Bad-Name" not in names
    said = [str(warning.message) for warning in caught]
    assert any("nowhere is not a folder" in text and text.endswith("skipped") for text in said)
    assert any("Bad-Name: a domain folder's name is the domain's name: lowercase letters" in text for text in said)
    assert {"mantra/operations-v2", "mantra/desk-v2"} <= set(register_shipped_suites())  # warned once, above
    assert find_suite("operations")[1].manifest.domain == "operations"


def test_a_domain_named_all_is_refused_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_user_domains: None
) -> None:
    root = tmp_path / "domains"
    write_domain(root, name="desk")
    write_domain(root, name="all")  # `--suite all` means every domain's default suite
    monkeypatch.setenv(PATH_VARIABLE, str(root))
    with pytest.warns(UserWarning, match=r"all: the name 'all' is reserved \(`--suite all` runs every domain"):
        names = domain_names()
    assert "desk" in names and "all" not in names


def test_n9_a_domain_whose_import_raises_is_one_line_when_asked_for(
    user_domains: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mantra_env.run import main as run_main

    folder = write_domain(user_domains, name="brk")
    (folder / "__init__.py").write_text("raise RuntimeError('boom at import')\n", encoding="utf-8")
    assert "brk" in domain_names() and load_domain("operations").name == "operations"
    with pytest.raises(DomainError, match=r"domain 'brk' \(.*\) failed to import: RuntimeError: boom at import"):
        load_domain("brk")
    assert run_main(["--suite", "brk", "--model", "scripted:noop", "--db", ":memory:"]) == 2
    err = capsys.readouterr().err
    assert "boom at import" in err and f"{folder / '__init__.py'}:1" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_an_unknown_domain_points_to_the_docs(user_domains: Path) -> None:
    with pytest.raises(DomainError, match=r"unknown domain 'dsk'.*docs/domains.md"):
        load_domain("dsk")


def test_a_broken_entry_point_is_an_error_for_its_name_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "broken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[mantra_env.domains]\nghost = no_such_package.domain\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "ghost" in domain_names() and load_domain("operations").name == "operations"
    with pytest.raises(DomainError, match=r"entry point ghost = no_such_package.domain of broken: .* not importable"):
        load_domain("ghost")
    with pytest.warns(UserWarning, match="no gymnasium ids for domain 'ghost'"):
        assert "mantra/operations-v2" in register_shipped_suites()
