"""``ast.parse`` for the tests that read the package's source, robust to CPython 3.11's
"AST constructor recursion depth mismatch".

On Python 3.11 (seen on 3.11.7), once a RecursionError has unwound through the compiler in a
long-lived process, ``ast.parse`` of an ordinary file can raise ``SystemError`` with that
message (the AST converter's depth counter no longer matches). The source is fine: it is
parsed again in a fresh interpreter, and its tree comes back pickled (AST nodes pickle).
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys

_CHILD = (
    "import ast, pickle, sys; "
    "sys.stdout.buffer.write(pickle.dumps(ast.parse(sys.stdin.read(), sys.argv[1])))"
)


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``; in a fresh interpreter if this one's is off."""
    try:
        return ast.parse(source, filename)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, filename],
        input=source.encode(),
        capture_output=True,
        timeout=120,
        check=True,
    )
    tree = pickle.loads(done.stdout)  # our own child's output
    assert isinstance(tree, ast.Module)
    return tree
