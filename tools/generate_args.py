"""Generate the components' ``*Args`` TypedDicts from the specs: ``python
tools/generate_args.py`` writes ``langop_infra/components/args.py`` (``--check`` only
compares).

The specs own every field, its type, whether it is required and its description; the
TypedDicts are their Python (and, through Pulumi's analyzer, multi-language) face:

- each nested spec becomes a TypedDict ``<Name>Args`` (``Spec`` dropped from the name), each
  optional field ``NotRequired``;
- a type the analyzer cannot express (a ``Literal``, a union such as "a count or a
  percentage", a component or its reference) gets an alias: the precise type for type
  checkers under ``TYPE_CHECKING``, the type the package schema shows at run time;
- top-level scalar fields of LanguageTool and LanguageAgent are ``pulumi.Input[...]``, but
  those in :data:`STRUCTURAL_FIELDS`, which decide which objects exist (except
  :data:`LATE_FIELDS`: ``namespace``, also an Input of LanguageModel and HttpTool); secret
  values accept Outputs everywhere;
- what a Python program may give and a stack file may not (an HttpTool's credential
  ``value``, its own Secret object as ``secret_ref.name``) is in :data:`PROGRAM_FIELDS`,
  since no spec may hold them.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.alias_generators import to_camel, to_snake
from pydantic.fields import FieldInfo

from langop_infra.config._fields import (
    SecretKeyRef,
    SecretSource,
    Spec,
    secret_env_value,
    secret_text,
)
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config._memory import MemorySpec
from langop_infra.config._model import ModelSpec, PersonaSpec
from langop_infra.config._pod import count_or_percent
from langop_infra.config._structure import LATE_FIELDS, STRUCTURAL_FIELDS
from langop_infra.config.agent import AgentSpec, WebhookAuth
from langop_infra.config.cluster import ClusterSpec, Defaults
from langop_infra.config.tool import ToolSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_field_docs import TARGET as DOCS_TARGET, generate as field_docs

TARGET = Path(__file__).resolve().parents[1] / "langop_infra" / "components" / "args.py"
SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}
# Field names too general to name a choice alone: their alias takes the model's name too.
GENERIC = {"type", "operator", "protocol", "role", "method", "access", "effect"}

# Fields whose run-time value is not what their annotation says: (model, field) -> alias.
ALIASES: dict[str, tuple[str, str, str]] = {
    # name: (doc, typing, run time)
    "SecretValue": (
        "A secret: a string or a pulumi secret Output (kept in a Secret), or an existing "
        "Secret's key",
        'Union[pulumi.Input[str], "SecretSourceArgs"]',
        "pulumi.Input[str]",
    ),
    "PersonaEntry": (
        "A persona's name, or the persona itself",
        'Union[str, "PersonaArgs", "PersonaSpec"]',
        "str",
    ),
    "SecretName": (
        "A Secret's name, or the Secret itself",
        'Union[pulumi.Input[str], "k8s.core.v1.Secret"]',
        "pulumi.Input[str]",
    ),
}


# One type in every language (the analyzer has no union, so Python gets no wider one): name ->
# (doc, type). A Python program may still pass a number at run time; the type says a string.
PLAIN: dict[str, tuple[str, str]] = {
    "Duration": ("A duration: '30s', '1m', '500ms', or seconds such as '30'", "str"),
    "CountOrPercent": ("A pod count such as '1' or a percentage such as '50%'", "str"),
}

# The component-typed aliases live with their components (``ToolEntry`` in components/tool.py,
# ``ModelEntry`` and ``ModelName`` in components/model.py): args.py imports nothing of the
# components, and the one Args that names them is written to its own module.
COMPONENT_ALIASES = {
    "ToolEntry": "tool",
    "ModelEntry": "model",
    "ModelName": "model",
    "PeerEntry": "_peers",
    "MemoryEntry": "_memory",
    "HttpToolEntry": "_http_tool",
}
APART = "LanguageAgentArgs"  # written to AGENT_TARGET: its fields name component types
AGENT_TARGET = TARGET.with_name("agent_args.py")

# Nested types whose default name is a component's Args: spec name -> type name.
NESTED_NAMES = {"HttpToolSpec": "HttpToolEntryArgs"}


@dataclass(frozen=True)
class ProgramFields:
    """A spec's TypedDict as a Python program may fill it and a stack file may not, so no
    spec says so: a credential's value (in a stack file it would sit in plain text; the
    component keeps it in a Secret of its own and hands the spec a ``secretRef``), a Secret
    object where the spec takes its name (the component reads its name and its data)."""

    spec: type[Spec]
    doc: str
    fields: dict[str, tuple[str, str]]  # name -> (type, description): a spec's, or added


PROGRAM_FIELDS = {
    "HttpToolSecretRefArgs": ProgramFields(
        SecretKeyRef,
        "A key of a Kubernetes Secret in the workload's namespace, the Secret by name or as "
        "the object.",
        {
            "name": (
                "SecretName",
                "Secret name, or your own k8s.core.v1.Secret: its data then rolls the agents "
                "that read it.",
            )
        },
    ),
    "HttpToolAuthArgs": ProgramFields(
        WebhookAuth,
        "How an HttpTool authenticates: a stack file's ``authentication`` fields, or the "
        "credential's ``value`` itself.",
        {
            "secret_ref": (
                "HttpToolSecretRefArgs",
                "The Secret key holding the credential (same namespace as the agent).",
            ),
            "value": (
                "pulumi.Input[str]",
                "The credential itself, as a secret Output (config.require_secret(...), "
                "pulumi.Output.secret(...)): kept in the tool's own Secret `<tool>.http-tool`, "
                "key `credential`, which agents read through secretKeyRef. Give value or "
                "secretRef, not both.",
            ),
        },
    ),
}

# Fields whose annotation says less than what they accept: (model, field) -> Args type.
FIELD_TYPES = {
    ("HeaderSpec", "secret"): "pulumi.Input[str]",
    ("AgentSpec", "persona"): "PersonaEntry",
    # A JSON Schema document: any JSON value, the one place an Args type is Any.
    ("WebhookToolSpec", "input_schema"): "dict[str, Any]",
    ("HttpToolFields", "input_schema"): "dict[str, Any]",
    ("HttpToolSpec", "input_schema"): "dict[str, Any]",
    # Accepted only to be refused with the restricted standard's reason.
    ("VolumeSpec", "host_path"): "dict[str, str]",
}


@dataclass
class Component:
    """One component's Args: the spec it mirrors and what differs from it."""

    name: str
    spec: type[Spec]
    doc: str
    drop: tuple[str, ...] = ()
    rename: dict[str, str] = field(default_factory=dict[str, str])
    override: dict[str, str] = field(default_factory=dict[str, str])
    extra: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    inputs: bool = False


CONTEXT = {
    "part_of": ("str", "app.kubernetes.io/part-of (default: the namespace)."),
    "defaults": ("DefaultsArgs", "Cluster-wide defaults (resources, security, egress...)."),
}
COMPONENTS = (
    Component(
        "LanguageToolArgs",
        ToolSpec,
        "The inputs of a LanguageTool; the same fields as a stack file's ``tools:`` entry.",
        drop=("name", "type"),
        rename={"args": "container_args"},
        extra=CONTEXT,
        inputs=True,
    ),
    Component(
        "LanguageAgentArgs",
        AgentSpec,
        "The inputs of a LanguageAgent; the same fields as a stack file's ``agents:`` entry.",
        drop=("name",),
        rename={"args": "container_args"},
        override={
            "tools": "list[ToolEntry]",
            "models": "list[ModelEntry]",
            "model": "ModelName",
            "agents": "list[PeerEntry]",
            "memory": "MemoryEntry",
            "http_tools": "list[HttpToolEntry]",
        },
        extra=CONTEXT,
        inputs=True,
    ),
    Component(
        "LanguageModelArgs",
        ModelSpec,
        "The inputs of a LanguageModel; the same fields as a stack file's ``models:`` entry.",
        drop=("name",),
        extra={
            "namespace": (
                "pulumi.Input[str]",
                "Namespace of the agents that use it (default: default).",
            )
        },
    ),
    Component(
        "LanguageMemoryArgs",
        MemorySpec,
        "The inputs of a LanguageMemory; the same fields as a stack file's ``memories:`` entry.",
        drop=("name",),
        override={"namespace": "pulumi.Input[str]"},
    ),
    Component(
        "HttpToolArgs",
        HttpToolSpec,
        "The inputs of an HttpTool; the same fields as a stack file's ``httpTools:`` entry.",
        drop=("name",),
        override={"namespace": "pulumi.Input[str]", "authentication": "HttpToolAuthArgs"},
        inputs=True,
    ),
    Component(
        "LanguageClusterArgs",
        ClusterSpec,
        "The inputs of a LanguageCluster: the same document as a stack file's config.",
    ),
)


class Writer:
    """Walks the specs from each component and writes one TypedDict per nested spec."""

    def __init__(self) -> None:
        # In the order they are finished: a class comes after those its fields name, since
        # the analyzer reads the annotations at run time.
        self.classes: dict[str, str] = {}
        self.started: set[str] = set()
        self.literals: dict[str, str] = {}

    def type_name(self, model: type[BaseModel]) -> str:
        base = model.__name__.removesuffix("Spec") or model.__name__
        name = NESTED_NAMES.get(model.__name__, f"{base}Args")
        if name not in self.started:
            self.started.add(name)
            self.classes[name] = self.typed_dict(name, model.__doc__ or "", model)
        return name

    def typed_dict(self, name: str, doc: str, model: type[BaseModel]) -> str:
        lines = [f"class {name}(TypedDict):", *_docstring(doc), ""]
        for key, info in model.model_fields.items():
            lines += self.field_lines(key, info, self.annotation(info, model, key), model)
        return "\n".join(lines)

    def program_fields(self, name: str, extra: ProgramFields) -> None:
        """``name``: the fields of ``extra.spec``, each of ``extra.fields`` in place of the
        spec's field of its name or after them, optional (copied, not inherited: the analyzer
        reads a class's own annotations)."""
        model, given = extra.spec, dict(extra.fields)
        lines = [f"class {name}(TypedDict):", *_docstring(extra.doc), ""]
        for key, info in model.model_fields.items():
            if key in given:
                text, doc = given.pop(key)
                info = copy.copy(info)
                info.description = doc
            else:
                text = self.annotation(info, model, key)
            lines += self.field_lines(key, info, text, model)
        for key, (text, doc) in given.items():
            lines += [f"    {key}: NotRequired[{text}]", *_docstring(doc)]
        self.classes[name] = "\n".join(lines)

    def field_lines(self, key: str, info: FieldInfo, text: str, model: type) -> list[str]:
        description = info.description
        if not description:
            raise ValueError(f"{model.__name__}.{key} has no description")
        lines = [
            f"    {key}: {text if info.is_required() else f'NotRequired[{text}]'}",
            *_docstring(_describe(description, info)),
        ]
        for alias in snake_aliases(key, info):  # a stack key's alias has its keyword too
            lines += [f"    {alias}: NotRequired[{text}]", *_docstring(f"Alias of {key}.")]
        return lines

    def annotation(self, info: FieldInfo, model: type, key: str, inputs: bool = False) -> str:
        if (model.__name__, key) in FIELD_TYPES:
            return FIELD_TYPES[model.__name__, key]
        return self.render(info.annotation, info.metadata, f"{model.__name__}.{key}", inputs)

    def render(self, tp: Any, metadata: list[Any], where: str, inputs: bool) -> str:
        """The annotation text of ``tp``; ``inputs`` wraps scalars in ``pulumi.Input``."""
        validators = [getattr(m, "func", None) for m in metadata]
        if get_origin(tp) is Annotated:
            base, *extra = get_args(tp)
            return self.render(base, [*metadata, *extra], where, inputs)
        if secret_env_value in validators or secret_text in validators:
            return "SecretValue"
        if count_or_percent in validators:
            return _input("CountOrPercent", inputs)
        if any(getattr(f, "__name__", "") == "parse_duration" for f in validators):
            return _input("Duration", inputs)
        origin = get_origin(tp)
        if origin in (Union, types.UnionType):
            options = [a for a in get_args(tp) if a is not type(None)]
            if len(options) != 1:
                raise TypeError(f"{where}: a union needs an alias in generate.ALIASES")
            return self.render(options[0], metadata, where, inputs)
        if origin is Literal:
            return _input(self.literal(tp, where), inputs)
        if origin is list:
            item = self.render(get_args(tp)[0], [], where, inputs)
            return _input(f"list[{item}]", inputs)
        if origin is dict:
            value = self.render(get_args(tp)[1], [], where, inputs)
            return _input(f"dict[str, {value}]", inputs)
        if tp in SCALARS:
            return _input(SCALARS[tp], inputs)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return self.type_name(tp)
        raise TypeError(f"{where}: no Args type for {tp!r}")

    def literal(self, tp: Any, where: str) -> str:
        """An alias for a ``Literal``, named after the first field that uses it."""
        text = f"Literal[{', '.join(json.dumps(v) for v in get_args(tp))}]"
        if text not in self.literals:
            model, key = where.split(".")
            name = _pascal(key)
            if key in GENERIC or name in self.literals.values():
                name = model.removesuffix("Spec") + name
            self.literals[text] = name
        return self.literals[text]

    def component(self, c: Component) -> str:
        lines = [f"class {c.name}(TypedDict):", *_docstring(c.doc), ""]
        for key, info in c.spec.model_fields.items():
            if key in c.drop:
                continue
            plain = not c.inputs or (key in STRUCTURAL_FIELDS and key not in LATE_FIELDS)
            text = c.override.get(key) or self.annotation(info, c.spec, key, not plain)
            lines += self.field_lines(c.rename.get(key, key), info, text, c.spec)
        for key, (text, doc) in c.extra.items():
            lines += [f"    {key}: NotRequired[{text}]", *_docstring(doc)]
        return "\n".join(lines)


def snake_aliases(key: str, info: FieldInfo) -> list[str]:
    """The snake_case keywords of a field's other stack keys (``systemPrompt`` ->
    ``system_prompt``); each must be among the keys the spec accepts."""
    choices = info.validation_alias
    names = (
        [c for c in choices.choices if isinstance(c, str)]
        if choices is not None and (hasattr(choices, "choices"))
        else []
    )
    snakes = [to_snake(name) for name in names if to_snake(name) != key]
    missing = [snake for snake in snakes if snake not in names]
    if missing:
        raise ValueError(f"{key}: add {missing} to its AliasChoices (every key has a keyword)")
    return list(dict.fromkeys(snake for snake in snakes if snake not in (key, to_camel(key))))


def _pascal(snake: str) -> str:
    return "".join(part.title() for part in snake.split("_") if part)


def _input(text: str, inputs: bool) -> str:
    return f"pulumi.Input[{text}]" if inputs else text


def _describe(description: str, info: FieldInfo) -> str:
    """The field's description, with its literal choices and a scalar default appended."""
    text = description.strip()
    choices = _literal_choices(info.annotation)
    if choices and "One of" not in text:
        text += f" One of: {', '.join(choices)}."
    default = info.default
    if isinstance(default, (str, int, float, bool)) and "efault" not in text:
        text += f" Default: {json.dumps(default)}."
    return text


def _literal_choices(tp: Any) -> list[str]:
    if get_origin(tp) is Literal:
        return [str(v) for v in get_args(tp)]
    for arg in get_args(tp):
        if found := _literal_choices(arg):
            return found
    return []


def _docstring(text: str) -> list[str]:
    """A docstring on one line (the analyzer keeps a wrapped one's indentation in the
    description); backslashes doubled, quotes escaped."""
    body = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return [f'    """{body}"""']


HEADER = '''"""The components' input TypedDicts: GENERATED from the specs by ``python
tools/generate_args.py``; do not edit (tests/test_typed_contract.py checks it is current).

Each field's type, whether it is required and its description come from the pydantic spec of
the same name; see ``tools/generate_args.py`` for the rules.
"""

from typing import TYPE_CHECKING, Any, Literal, Union

import pulumi
from typing_extensions import NotRequired, TypedDict

if TYPE_CHECKING:
    import pulumi_kubernetes as k8s

    from langop_infra.config._model import PersonaSpec

'''

AGENT_HEADER = '''"""LanguageAgentArgs: GENERATED from the specs by ``python
tools/generate_args.py``; do not edit (tests/test_typed_contract.py checks it is current).

It lives apart from ``args.py`` because its tools and models may be components: the
component-typed aliases live with their components, and ``args.py`` imports nothing of them.
"""

import pulumi
from typing_extensions import NotRequired, TypedDict

'''


def _plain() -> str:
    lines: list[str] = []
    for n, (doc, tp) in PLAIN.items():
        lines += [f"# {doc}.", f"{n} = {tp}"]
    return "\n".join(lines)


def _aliases(names: dict[str, tuple[str, str, str]], literals: dict[str, str]) -> str:
    typed = [f"    {n} = {text}" for text, n in sorted(literals.items(), key=lambda x: x[1])]
    for n, (doc, tp, _) in names.items():
        typed += [f"    # {doc}.", f"    {n} = {tp}"]
    plain = [f"    {n} = str" for n in sorted(literals.values())]
    plain += [f"    {n} = {rt}" for n, (_, _, rt) in names.items()]
    return "\n".join(
        [
            "if TYPE_CHECKING:",
            *typed,
            "else:  # what Pulumi's analyzer reads: no Literal or Union in a package schema",
            *plain,
        ]
    )


def _generate() -> tuple[str, str]:
    writer = Writer()
    for name, extra in PROGRAM_FIELDS.items():  # before the components that name them
        writer.program_fields(name, extra)
    components = {c.name: writer.component(c) for c in COMPONENTS}
    writer.type_name(SecretSource)  # named by the SecretValue alias
    writer.type_name(Defaults)
    writer.type_name(PersonaSpec)
    apart = components.pop(APART)
    body = [
        _plain(),
        _aliases(ALIASES, writer.literals),
        *writer.classes.values(),
        *components.values(),
    ]
    names = sorted([*writer.classes, *components])
    args = HEADER + "\n\n\n".join(body) + "\n\n\n__all__ = " + _all(names) + "\n"
    defined = {*names, *writer.literals.values(), *ALIASES, *PLAIN}
    agent = AGENT_HEADER + _imports(apart, defined) + "\n\n" + apart
    return args, agent + f'\n\n\n__all__ = ["{APART}"]\n'


def _imports(text: str, defined: set[str]) -> str:
    """The import lines for the names ``text``'s annotations use: the component-typed aliases
    from their components, the rest from ``args.py`` (``defined`` holds its names)."""
    annotations = "\n".join(line for line in text.splitlines() if not line.strip().startswith('"'))
    used = set(re.findall(r"\b([A-Z][A-Za-z0-9]+)\b", annotations))  # A2AArgs too
    modules: dict[str, list[str]] = {}
    for n in sorted(used):
        module = COMPONENT_ALIASES.get(n) or ("args" if n in defined else None)
        if module:
            modules.setdefault(module, []).append(n)
    return "".join(
        f"from langop_infra.components.{module} import (\n"
        + "".join(f"    {n},\n" for n in modules[module])
        + ")\n"
        for module in sorted(modules)
    )


def generate() -> str:
    """The text of ``components/args.py``."""
    return _generate()[0]


def generate_agent_args() -> str:
    """The text of ``components/agent_args.py``."""
    return _generate()[1]


def _all(names: list[str]) -> str:
    return "[\n" + "".join(f'    "{n}",\n' for n in names) + "]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/generate_args.py")
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args(argv)
    args_text, agent_text = _generate()
    stale = 0
    targets = (TARGET, args_text), (AGENT_TARGET, agent_text), (DOCS_TARGET, field_docs())
    for target, text in targets:
        if args.check:
            if not target.exists() or target.read_text() != text:
                print(f"{target} is stale: run python tools/generate_args.py", file=sys.stderr)
                stale = 1
            continue
        target.write_text(text)
        print(f"wrote {target}")
    return stale


if __name__ == "__main__":
    raise SystemExit(main())
