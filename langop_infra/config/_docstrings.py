"""Field descriptions from the docstrings under the fields, read once per module.

pydantic's ``use_attribute_docstrings`` finds each class's source through the stack and
tokenizes its block again for every model: about a third of the time the models take to
import. Here each module's source is parsed once, and each class's docstrings are read with
pydantic's own visitor (``DocstringVisitor``), so the descriptions are the same; a class whose
source cannot be found this way (defined in a function, a name defined twice) goes through
pydantic's own extraction.

Parsing the modules was still a fifth of what ``validate`` costs (issue 41), so the package's
own modules' docstrings are also kept, generated, in ``_field_docs.py`` (written by
``python tools/generate_args.py`` beside the Args), each module's with the SHA-256 of the
source it was read from: a module whose source no longer matches is parsed as before.
"""

import ast
import hashlib
import sys
from functools import cache

from pydantic._internal._docs_extraction import (
    DocstringVisitor,
    extract_docstrings_from_cls,
)
from pydantic.fields import FieldInfo


def describe_fields(cls: type[object], fields: dict[str, FieldInfo]) -> None:
    """Set each field's description from its docstring, where it has none (as pydantic's
    ``use_attribute_docstrings`` does)."""
    docs = _class_docstrings(cls)
    if docs is None:
        docs = extract_docstrings_from_cls(cls)
    for name, info in fields.items():
        if info.description is None and name in docs:
            info.description = docs[name]


def _class_docstrings(cls: type[object]) -> dict[str, str] | None:
    if "<locals>" in cls.__qualname__:
        return None
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    docs = _module_docs(cls.__module__, path) if isinstance(path, str) else None
    if docs is None:
        return None
    return docs.get(cls.__qualname__)


@cache
def _module_docs(module: str, path: str) -> dict[str, dict[str, str]] | None:
    """Each class's field docstrings, by qualified name: the generated ones when they were
    read from this very source, else parsed."""
    try:
        with open(path, "rb") as file:
            source = file.read()
    except OSError:
        return None
    from langop_infra.config._field_docs import DOCS

    kept = DOCS.get(module)
    if kept is not None and kept[0] == source_digest(source):
        return kept[1]
    return parse_docs(source)


def source_digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def parse_docs(source: bytes) -> dict[str, dict[str, str]] | None:
    """Each class's field docstrings as pydantic's ``DocstringVisitor`` reads them, by
    qualified name (a name defined twice is left out); None if the source does not parse."""
    classes = _module_classes(source)
    if classes is None:
        return None
    docs: dict[str, dict[str, str]] = {}
    for name, node in classes.items():
        visitor = DocstringVisitor()
        visitor.generic_visit(node)
        docs[name] = visitor.attrs
    return docs


def _module_classes(source: bytes) -> dict[str, ast.ClassDef] | None:
    """Every class of a module by qualified name; a name defined twice is left out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, ast.ClassDef] = {}
    twice: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{prefix}{node.name}"
                if name in found:
                    twice.add(name)
                found[name] = node
                walk(node.body, f"{name}.")

    walk(tree.body, "")
    return {name: node for name, node in found.items() if name not in twice}
