"""The generated field docstrings (issue 41): current, used while their source matches (the
models import without parsing a module), and ignored for a module whose source changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langop_infra.config import _docstrings as docstrings, _field_docs as field_docs
from tests.support.repo_tools import load

generate = load("generate_field_docs")


def test_generated_field_docs_are_current() -> None:
    committed = Path(field_docs.__file__).read_text()
    assert committed == generate.generate(), "run: python tools/generate_args.py"


def test_every_spec_module_is_kept() -> None:
    assert "langop_infra.config._pod" in field_docs.DOCS
    digest, classes = field_docs.DOCS["langop_infra.config._fields"]
    assert len(digest) == 64
    assert classes["SecretSource"] == {"secret_key_ref": "The Secret's name and key."}


def test_importing_the_models_parses_no_module() -> None:
    code = (
        "import ast\n"
        "seen = []\n"
        "real = ast.parse\n"
        "ast.parse = lambda *a, **k: seen.append(1) or real(*a, **k)\n"
        "import langop_infra.offline._validate, langop_infra.config.cluster\n"
        "print(len(seen))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "0"


def test_a_changed_module_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    module = "langop_infra.config._fields"
    path = str(sys.modules[module].__file__)
    source = Path(path).read_bytes()
    kept = field_docs.DOCS[module]
    docstrings._module_docs.cache_clear()  # pyright: ignore[reportPrivateUsage]
    try:
        same = docstrings._module_docs(module, path)  # pyright: ignore[reportPrivateUsage]
        assert same is kept[1]
        docstrings._module_docs.cache_clear()  # pyright: ignore[reportPrivateUsage]
        stale = {"SecretSource": {"secret_key_ref": "stale text"}}
        monkeypatch.setitem(field_docs.DOCS, module, ("0" * 64, stale))
        parsed = docstrings._module_docs(module, path)  # pyright: ignore[reportPrivateUsage]
        assert parsed is not stale
        assert parsed == docstrings.parse_docs(source) == kept[1]
    finally:
        docstrings._module_docs.cache_clear()  # pyright: ignore[reportPrivateUsage]
