"""Field descriptions from the docstrings under the fields, read once per module.

pydantic's ``use_attribute_docstrings`` finds each class's source through the stack and
tokenizes its block again for every model: about a third of the time the models take to
import. Here each module's source is parsed once, and each class's docstrings are read with
pydantic's own visitor (``DocstringVisitor``), so the descriptions are the same; a class whose
source cannot be found this way (defined in a function, a name defined twice) goes through
pydantic's own extraction.
"""

import ast
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
    classes = _module_classes(path) if isinstance(path, str) else None
    if classes is None:
        return None
    found = classes.get(cls.__qualname__)
    if found is None:
        return None
    visitor = DocstringVisitor()
    visitor.generic_visit(found)
    return visitor.attrs


@cache
def _module_classes(path: str) -> dict[str, ast.ClassDef] | None:
    """Every class of a module by qualified name; a name defined twice is left out."""
    try:
        with open(path, "rb") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
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
