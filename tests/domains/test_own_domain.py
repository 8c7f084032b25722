"""docs/domains.md followed from scratch: a domain folder of one's own (toolkit, database, manual), outside the
package, on MANTRA_DOMAINS_PATH; its tools.json, a hand-written suite built by `mantra author`, the default suite
declared in domain.yaml, listed by `mantra suites`, run by `mantra run --suite library`, made by gymnasium."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env.domains.__main__ import rendered
from mantra_env.domains.discovery import PATH_VARIABLE
from mantra_env.mantra_cli.main import main
from mantra_env.registration import register_shipped_suites

FILES = {
    "__init__.py": '''"""A lending library."""
from pathlib import Path

from mantra_env.domains import Domain

from .database import LibraryDatabase
from .tools import LibraryToolkit

DOMAIN = Domain.from_folder(Path(__file__).parent, "library", LibraryToolkit, LibraryDatabase)
''',
    "database.py": """from pydantic import BaseModel


class Book(BaseModel):
    book_id: str
    title: str
    on_loan_to: str | None = None


class LibraryDatabase(BaseModel):
    books: dict[str, Book]
""",
    "tools.py": '''from typing import Any

from mantra_env.toolkit import ToolFailure, Toolkit, tool

from .database import LibraryDatabase


class LibraryToolkit(Toolkit):
    domain = "library"

    def __init__(self, db: LibraryDatabase) -> None:
        self.db = db

    @tool(kind="read")
    def find_book(self, title: str) -> list[dict[str, Any]]:
        """Find books by title.

        Args:
            title: The title or part of it.
        """
        return [book.model_dump() for book in self.db.books.values() if title.lower() in book.title.lower()]

    @tool(kind="write")
    def lend_book(self, book_id: str, member_id: str) -> dict[str, Any]:
        """Lend a book to a member.

        Args:
            book_id: The book's id, e.g. "B1".
            member_id: The member's card number.
        """
        book = self.db.books.get(book_id)
        if book is None or book.on_loan_to is not None:
            raise ToolFailure(f"book {book_id!r} cannot be lent", code="unavailable")
        book.on_loan_to = member_id
        return book.model_dump()
''',
    "manual.md": "# Lending\n\nAlways find the book by its title before lending it; lend only available books.\n",
    "db.json": json.dumps({"books": {"B1": {"book_id": "B1", "title": "Dune"}}}),
    "domain.yaml": "default_suite: starter\n",
    "suites/starter/source.yaml": """name: starter
domain: library
version: 0
bound: 4
world_models:
  lending: |
    (model
      (var book_id String)
      (var member_id String)
      (var title String)
      (var found Bool)
      (var lent Bool)
      (transition find_book
        (params (title t))
        (pre)
        (post (= (next found) (or found (= (param t) title)))))
      (transition lend_book
        (params (book_id b) (member_id m))
        (pre found)
        (post (= (next lent) (or lent (and (= (param b) book_id) (= (param m) member_id)))))))
cases:
  - id: lend-dune
    prompt: Member M7 would like to borrow Dune.
    external: {book_id: B1, title: Dune}
    internal: {member_id: M7, found: false, lent: false}
    world_model: lending
    goal: ["(= lent true)"]
    checks:
      find_first: CALL find_book(title="Dune") PRECEDES CALL lend_book(book_id="B1", member_id="M7")
""",
}


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget_user_domains: None) -> Path:
    folder = tmp_path / "library"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv(PATH_VARIABLE, str(folder))
    return folder


def test_the_checklist_from_a_clean_folder(library: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, text = rendered("library")
    assert path == library.resolve() / "tools.json" and '"name": "lend_book"' in text and '"kind": "write"' in text

    assert main(["author", str(library / "suites/starter/source.yaml")]) == 0
    assert (library / "suites/starter/manifest.json").is_file()

    capsys.readouterr()
    assert main(["suites"]) == 0
    listed = capsys.readouterr().out
    assert "library/starter *" in listed and "mantra/library-v2, library/starter-v2" in listed

    db = tmp_path / "r.duckdb"
    assert main(["run", "--model", "scripted:oracle", "--attempts", "1", "--suite", "library", "--db", str(db)]) == 0
    assert "100" in capsys.readouterr().out

    register_shipped_suites()
    env = gym.make("mantra/library-v2").unwrapped
    assert env.suite.manifest.domain == "library"  # type: ignore[attr-defined]


def test_the_generator_s_domain_key_names_it(library: Path) -> None:
    from mantra_env.domains import load_domain
    from mantra_env.generators.config import domain_tools, parse_config

    shipped = Path(__file__).parents[2] / "mantra_env" / "domains" / "operations" / "generation.yaml"
    text = shipped.read_text(encoding="utf-8").replace(": operations\n", ": library\n")
    config = parse_config(text, "generation.yaml", library, env={})
    assert config.domain == "library" and config.tools.format == "domain"
    tools = domain_tools(config, load_domain(config.domain))
    assert [spec.name for spec in tools] == ["find_book", "lend_book"]
