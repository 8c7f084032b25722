"""One Ray for every test of this folder (``ray.init(num_cpus=2, include_dashboard=False)``, a small object
store), started through :func:`mantra_env.mantra_cli.ray_pool.ray_workers` from a temporary directory with a user domain
on ``MANTRA_DOMAINS_PATH``: the workers get the code and the domain from the runtime environment, not from the
driver's directory. The commands under test find this Ray running and use it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mantra_env.domains.discovery import PATH_VARIABLE
from tests.domains.conftest import forget_user_domains as forget_user_domains  # the fixture, re-exported
from tests.domains.test_own_domain import FILES

pytest.importorskip("ray", reason="Ray is not installed (the extra mantra-env[ray]; `make test` installs it)")

from mantra_env.mantra_cli.ray_pool import RayWorkers, ray_workers

OBJECT_STORE_BYTES = 78_643_200  # Ray's smallest: these tests pass kilobytes


@pytest.fixture(scope="session")
def library_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lending-library domain of docs/domains.md (tests/domains/test_own_domain.py), its suite built."""
    from mantra_env.authoring import main as author

    folder = tmp_path_factory.mktemp("user-domains") / "library"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    previous = os.environ.get(PATH_VARIABLE)
    os.environ[PATH_VARIABLE] = str(folder)
    try:
        assert author([str(folder / "suites/starter/source.yaml")]) == 0
    finally:
        _restore(PATH_VARIABLE, previous)
    return folder


@pytest.fixture(scope="module")  # stopped after the file: its idle workers held a tenth of a core to the end
def ray_cluster(library_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RayWorkers]:
    """The file's Ray: started from an empty directory, with the library domain on the path while it starts
    (the runtime environment takes a copy; the variable is restored at once, so other tests never see it)."""
    settings = {"RAY_DEDUP_LOGS": "0", "RAY_USAGE_STATS_ENABLED": "0", PATH_VARIABLE: str(library_folder)}
    saved = {name: os.environ.get(name) for name in settings}
    here = Path.cwd()
    os.environ.update(settings)
    os.chdir(tmp_path_factory.mktemp("elsewhere"))
    try:
        with ray_workers(None, num_cpus=2, object_store_memory=OBJECT_STORE_BYTES) as workers:
            os.chdir(here)
            _restore(PATH_VARIABLE, saved[PATH_VARIABLE])
            yield workers
    finally:
        os.chdir(here)
        for name, value in saved.items():
            _restore(name, value)


@pytest.fixture
def library(library_folder: Path, monkeypatch: pytest.MonkeyPatch, forget_user_domains: None) -> Path:
    """The library domain on this process's path for one test (the workers have their copy)."""
    monkeypatch.setenv(PATH_VARIABLE, str(library_folder))
    return library_folder


def _restore(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
