"""No test asserts on wall-clock time (#37, #35): a duration depends on the machine's load, so
such a test fails on a busy machine and passes a slow regression on an idle one. Performance
is measured by hand in benchmarks/; a test waits on events, and a timeout in a test only
guards against a hang.

The check reads every test module's syntax tree. A *clock* is a call to ``monotonic``,
``perf_counter``, ``time`` or ``process_time`` (``time.monotonic()``, ``loop.time()``, ...),
or a name assigned one; a *duration* is a subtraction involving a clock, a name assigned a
duration, a name unpacked from a call to a module function that returns a duration, or a
parameter of a module function that some call passes a duration. An ``assert`` whose test
compares a duration fails this check.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.source import parse_source

TESTS = Path(__file__).resolve().parent
CLOCKS = frozenset(
    {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "process_time"}
)


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in CLOCKS


class _Flow:
    """Which names of one module hold clocks and durations (module-wide, to a fixpoint)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.clocks: set[str] = set()
        self.durations: set[str] = set()
        # functions that return a duration: where in the tuple they return (-1: the value)
        self.returning: dict[str, set[int]] = {}
        self.functions = {
            f.name: f
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        size = -1
        while size != self._size():
            size = self._size()
            self._step()

    def _size(self) -> int:
        found = sum(len(places) for places in self.returning.values())
        return len(self.clocks) + len(self.durations) + found

    def is_clock(self, node: ast.AST) -> bool:
        return _is_clock_call(node) or (isinstance(node, ast.Name) and node.id in self.clocks)

    def is_duration(self, node: ast.AST) -> bool:
        """Whether ``node`` is (or holds, anywhere inside) a duration."""
        for inner in ast.walk(node):
            if (
                isinstance(inner, ast.BinOp)
                and isinstance(inner.op, ast.Sub)
                and (self.is_clock(inner.left) or self.is_clock(inner.right))
            ):
                return True
            if isinstance(inner, ast.Name) and inner.id in self.durations:
                return True
        return False

    def _returned(self, value: ast.AST) -> set[int]:
        """Where the value of a call to a duration-returning function holds durations."""
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            return self.returning.get(value.func.id, set())
        return set()

    def _unpacked(self, targets: list[ast.expr], places: set[int]) -> list[str]:
        names: list[str] = []
        for target in targets:
            if isinstance(target, ast.Tuple) and -1 not in places:
                elements = enumerate(target.elts)
                names += [e.id for i, e in elements if i in places and isinstance(e, ast.Name)]
            else:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        return names

    def _step(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                if _is_clock_call(node.value):
                    self.clocks.update(names)
                elif places := self._returned(node.value):
                    self.durations.update(self._unpacked(targets, places))
                elif self._holds_duration(node.value):
                    self.durations.update(names)
            elif isinstance(node, ast.Return) and node.value is not None:
                if isinstance(node.value, ast.Tuple):
                    places = {i for i, e in enumerate(node.value.elts) if self.is_duration(e)}
                else:
                    places = {-1} if self.is_duration(node.value) else set()
                for name in self._enclosing(node) if places else ():
                    self.returning.setdefault(name, set()).update(places)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callee = self.functions.get(node.func.id)
                if callee is not None:
                    params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
                    for param, arg in zip(params, node.args, strict=False):
                        if self.is_duration(arg):
                            self.durations.add(param)
                    for keyword in node.keywords:
                        if keyword.arg and self.is_duration(keyword.value):
                            self.durations.add(keyword.arg)

    def _holds_duration(self, value: ast.AST) -> bool:
        """A duration itself, or a tuple holding one: not any expression that uses one."""
        parts = value.elts if isinstance(value, ast.Tuple) else [value]
        return any(
            (isinstance(p, ast.BinOp) and self.is_duration(p))
            or (isinstance(p, ast.Name) and p.id in self.durations)
            for p in parts
        )

    def _enclosing(self, node: ast.AST) -> list[str]:
        return [
            name
            for name, function in self.functions.items()
            if any(inner is node for inner in ast.walk(function))
        ]


def timed_assertions(source: str) -> list[int]:
    """Line numbers of the asserts in ``source`` that compare a duration."""
    tree = parse_source(source)
    flow = _Flow(tree)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Assert)
        and any(
            isinstance(inner, ast.Compare) and flow.is_duration(inner)
            for inner in ast.walk(node.test)
        )
    )


def test_no_test_asserts_on_wall_clock_time() -> None:
    found = {
        str(path.relative_to(TESTS.parent)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := timed_assertions(path.read_text(encoding="utf-8")))
    }
    assert found == {}, (
        "these asserts compare a wall-clock duration; assert on an outcome or a count, wait "
        f"on an event, or measure it in benchmarks/: {found}"
    )


# --- the check itself can fail ----------------------------------------------------------------


def test_the_check_finds_each_shape_of_timed_assertion_it_replaced() -> None:
    direct = (
        "import time\nstarted = time.monotonic()\nrun()\nassert time.monotonic() - started < 1\n"
    )
    assert timed_assertions(direct) == [4]
    named = (
        "started = time.perf_counter()\nrun()\nelapsed = time.perf_counter() - started\n"
        "assert len(x) == 3\nassert elapsed < 30, elapsed\n"
    )
    assert timed_assertions(named) == [5]
    helper = (
        "def timed(call):\n    started = time.monotonic()\n    value = call()\n"
        "    return value, time.monotonic() - started\n\n"
        "def check(outs, seconds):\n    assert outs\n    assert seconds < 2.5\n\n"
        "def test():\n    step, seconds = timed(lambda: 1)\n    check({}, seconds)\n"
    )
    assert timed_assertions(helper) == [8]
    loop_clock = "t0 = loop.time()\nawait go()\nassert DELAY <= loop.time() - t0\n"
    assert timed_assertions(loop_clock) == [3]
    walrus = "assert (took := time.monotonic() - start) >= 0.08\n"
    assert timed_assertions(walrus) == [1]


def test_the_check_leaves_hang_guards_and_clock_free_asserts_alone() -> None:
    guard = (
        "give_up = time.monotonic() + 30\n"
        "while process_state(pid) != 'gone' and time.monotonic() < give_up:\n"
        "    time.sleep(0.05)\n"
        "assert process_state(pid) == 'gone'\n"
    )
    assert timed_assertions(guard) == []
    points = (
        "started = time.monotonic()\nrun()\nduration = time.monotonic() - started\n"
        "points = sorted(rng.uniform(0.25, 0.8 * duration) for _ in range(10))\n"
        "assert len(set(points)) == 10, points\n"
    )
    assert timed_assertions(points) == []
    assert timed_assertions("assert parse_duration('1m') == 60\n") == []
