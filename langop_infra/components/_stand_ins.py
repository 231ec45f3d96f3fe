"""Values tried in place of an unknown Output while a component's arguments are checked
(:mod:`langop_infra.components._inputs`): the first a field accepts stands in for it, a
second that changes the parsed spec shows which parts of an object depend on it."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langop_infra.core.problems import Problem, SpecError, loc_path

Path = tuple[int | str, ...]

# Values tried in place of an unknown one, until one passes that field's own checks.
STAND_INS: tuple[Any, ...] = (
    # An image with a tag first: the labels made from an image keep their keys.
    "ghcr.io/placeholder/image:0",
    "placeholder",
    "http://placeholder.invalid",
    8080,
    1,
    True,
    "1",
    "/placeholder",
    "10.0.0.0/8",
    [],
    {},
    # Second ones: a part that changes with the stand-in depends on the unknown value.
    "placeholder-b",
    "ghcr.io/placeholder-b/image-b:1",
    "http://placeholder-b.invalid",
    8081,
    2,
    False,
    "/placeholder-b",
    "10.1.0.0/16",
    # Quantities (cpu, memory) below any limit.
    "1m",
    "2m",
    # A mapping given as one Output (node_selector=...): which keys the real one has.
    {"placeholder-b": "placeholder-b"},
)


def replaced(data: Any, path: Path, value: Any) -> Any:
    """A copy of ``data`` with the value at ``path`` replaced (containers copied on the way)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, Mapping):
        mapping = cast("Mapping[int | str, Any]", data)
        return {**mapping, head: replaced(mapping[head], rest, value)}
    items = list(data)
    items[head] = replaced(items[head], rest, value)  # type: ignore[index]
    return items


def under(path: str, prefixes: Mapping[str, object]) -> bool:
    return any(path == key or path.startswith((key + ".", key + "[")) for key in prefixes)


def with_stand_ins(
    data: object,
    parse: Callable[[Any], object],
    deferred: Sequence[tuple[Path, object]],
    subject: str,
) -> Any:
    """``data`` with each unknown value replaced by the first stand-in its field accepts; a
    field that accepts none (one of a fixed set of words) must be known now."""
    filled = data
    for path, _ in deferred:
        for candidate in STAND_INS:
            attempt = replaced(filled, path, candidate)
            if _accepted(parse, attempt, path):
                filled = attempt
                break
        else:
            problem = Problem(
                loc_path(path),
                "must be known when the program runs, not an Output: its checks (one of a "
                "fixed set of words, or a bound other fields set) need its value before "
                "anything is registered; pass a plain value",
            )
            raise SpecError([problem], subject=subject)
    return filled


def alternative(filled: Any, parse: Callable[[Any], object], spec: Any, path: Path) -> Any:
    """``filled`` with another stand-in at ``path``, one that changes the parsed spec (``1``
    and ``"1"`` both parse to 1: the second would hide that the value matters); None when
    the field accepts no other."""
    current = filled
    for key in path:
        current = current[key]
    # The stand-in's own counterpart first: an image for an image, so that what is made of
    # it (labels) keeps its shape and only its values wait.
    for candidate in [*_PAIRED.get(repr(current), []), *STAND_INS]:
        attempt = replaced(filled, path, candidate)
        try:
            if parse(attempt) != spec:
                return attempt
        except SpecError:
            continue
    return None


# Each first stand-in's second one, of the same kind.
_PAIRED: dict[str, list[Any]] = {
    repr("ghcr.io/placeholder/image:0"): ["ghcr.io/placeholder-b/image-b:1"],
    repr("placeholder"): ["placeholder-b"],
    repr("http://placeholder.invalid"): ["http://placeholder-b.invalid"],
    repr("/placeholder"): ["/placeholder-b"],
    repr("10.0.0.0/8"): ["10.1.0.0/16"],
    repr("1m"): ["2m"],
}


def _accepted(parse: Callable[[Any], object], attempt: object, path: Path) -> bool:
    try:
        parse(attempt)
    except SpecError as exc:
        # Another field's problem (such as a second unknown still in place) is not this one's.
        return not any(under(p.path, {loc_path(path): None}) for p in exc.problems)
    return True
