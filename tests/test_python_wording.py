"""Each side in its own words (issue 35): a component built from Python names Python values
(``None``, ``True``, ``dict``, snake_case fields); the same mistake in a stack file keeps
YAML's (``null``, ``true/false``, ``mapping``, camelCase fields)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langop_infra import LanguageAgent, LanguageTool
from langop_infra.cli.main import main
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program

ROOT = Path(__file__).resolve().parents[1]
DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0@sha256:" + "a" * 64


def python_problems(component: Any, **fields: Any) -> dict[str, str]:
    with pytest.raises(SpecError) as caught:
        run_program(lambda: component("x", image=IMAGE, namespace="apps", **fields))
    return {p.path: p.message for p in caught.value.problems}


@pytest.mark.parametrize(
    ("component", "fields", "path", "message"),
    [
        (LanguageTool, {"port": True}, "port", "expected an integer, got True; write a number"),
        (
            LanguageTool,
            {"resources": {"requests": None}},
            "resources.requests",
            "expected a dict {cpu, memory}, got None",
        ),
        (
            LanguageTool,
            {"env": ["WORKERS=4"]},
            "env",
            "expected a dict of names to strings, got a list",
        ),
        (LanguageTool, {"command": {"a": 1}}, "command", "expected a list of strings, got a dict"),
        (
            LanguageAgent,
            {"tools": [None]},
            "tools[0]",
            "expected a list of {name, …}; this item is None",
        ),
        (
            LanguageAgent,
            {"tools": [{"name": "x", "required": None}]},
            "tools[0].required",
            "expected True or False, got None; write the value as such",
        ),
        (
            LanguageAgent,
            {"mcp_servers": {"search": {}}},
            "mcp_servers",
            # Over six fields (allowed_tools is the seventh): the required ones, then "…".
            "expected a list of {name, url, …}, got a dict",
        ),
    ],
)
def test_python_components_name_python_values(
    component: Any, fields: dict[str, Any], path: str, message: str
) -> None:
    found = python_problems(component, **fields)
    assert found.get(path) == message, found


@pytest.mark.parametrize(
    ("old", "new", "path", "message"),
    [
        (
            "      port: 9090\n",
            "      port: true\n",
            "tools[1].port",
            "expected an integer, got true/false; write a number",
        ),
        (
            "      env:\n        MEMORY_DB_PATH: /data/memory.db\n",
            "      env: [WORKERS=4]\n",
            "tools[0].env",
            "expected a mapping of names to strings, got a list",
        ),
        (
            "      persistence: {size: 1Gi, mountPath: /data}\n",
            "      persistence: {size: 1Gi, mountPath: /data}\n      resources: {requests: null}\n",
            "tools[0].resources.requests",
            "expected a mapping {cpu, memory}, got null",
        ),
    ],
)
def test_stack_files_keep_yaml_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, path: str, message: str
) -> None:
    assert old in DEV
    stack = tmp_path / "Pulumi.qa.yaml"
    stack.write_text(DEV.replace(old, new, 1))
    code = main(["render", "--config", str(stack), "--project-dir", str(ROOT)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"  - {stack}:" in err and f"langop-infra:{path}: {message}\n" in err, err
