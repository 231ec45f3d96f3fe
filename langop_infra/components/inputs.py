"""Component arguments that hold ``pulumi.Output`` values: validate what is known now, and
the rest when it resolves.

``LanguageTool("t", image=build.image_name)`` must work. A value unknown at preview time
cannot be checked before registration, so its checks run in an ``apply`` and fail there with
the field path; every value that is known is still checked before anything is registered.
The structure of a component (which objects exist, their names) must not depend on an Output:
fields that decide it are refused as Outputs up front.
"""

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

import pulumi

from langop_infra.core.errors import Problem, SpecError, loc_path
from langop_infra.spec.structure import structural_keys

S = TypeVar("S")
R = TypeVar("R")
Path = tuple[int | str, ...]
# An Output inside a component's arguments, with its path there.
Leaf = tuple[Path, pulumi.Output[Any]]

# Fields that decide which objects exist or what they are called, in both spellings.
STRUCTURAL = structural_keys()
# Values tried in place of an unknown one, until one passes that field's own checks.
STAND_INS: tuple[Any, ...] = (
    "placeholder",
    "ghcr.io/placeholder/image:0",
    "http://placeholder.invalid",
    8080,
    1,
    True,
    "1",
    "/placeholder",
    "10.0.0.0/8",
    [],
    {},
)


def merged_input(args: Any, fields: Mapping[str, Any], spec: type[Any]) -> dict[str, Any]:
    """One mapping from a component's ``args`` (a mapping, or its ``spec`` model) and keyword
    fields; ``container_args`` (the keyword, since ``args`` is the component's own
    parameter) is the document's ``args``."""
    data = (
        args.model_dump(by_alias=False, exclude_unset=True)
        if isinstance(args, spec)
        else dict(args or {})
    )
    data.update(fields)
    if "container_args" in data:
        data["args"] = data.pop("container_args")
    return data


def output_leaves(data: Any, path: Path = ()) -> Iterator[Leaf]:
    """Every Output inside nested mappings and lists, with its path."""
    if isinstance(data, pulumi.Output):
        yield path, cast("pulumi.Output[Any]", data)
    elif isinstance(data, Mapping):
        for key, value in cast("Mapping[str, Any]", data).items():
            yield from output_leaves(value, (*path, key))
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(cast("Sequence[Any]", data)):
            yield from output_leaves(value, (*path, index))


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


def resolve(
    data: Mapping[str, Any],
    parse: Callable[[Any], S],
    build: Callable[[S], R],
    structure: Callable[[S], Any],
    subject: str,
) -> tuple[S, R | pulumi.Output[R]]:
    """The parsed spec and what ``build`` makes of it, as an Output when a value is unknown.

    With no Output in a place the spec cannot hold one, this is ``build(parse(data))``.
    """
    leaves = list(output_leaves(data))
    try:
        spec = parse(data)
    except SpecError as exc:
        deferred = _deferred(leaves, exc.problems)
        known = [p for p in exc.problems if not _under(p.path, _paths(deferred))]
        if known or not deferred:
            raise SpecError(known or exc.problems, subject=subject) from None
    else:
        return spec, build(spec)
    _refuse_structural(deferred, subject)
    stand_in = _stand_in(data, parse, deferred)
    spec = parse(stand_in)
    other = _stand_in(data, parse, deferred, unlike=stand_in)

    def resolved(values: list[Any]) -> R:
        filled: Any = data
        for (path, _), value in zip(deferred, values, strict=True):
            filled = replaced(filled, path, value)
        try:
            real = parse(filled)
        except SpecError as exc:
            raise SpecError(exc.problems, subject=subject) from None
        if structure(real) != structure(spec):
            raise SpecError(
                [Problem("", "an Output changed the component's structure")], subject=subject
            )
        return build(real)

    final = pulumi.Output.all(*[o for _, o in deferred]).apply(resolved)
    if other is None:
        return spec, final
    second = parse(other)
    if structure(second) != structure(spec):
        return spec, final
    return spec, Pending(build(spec), build(second), final)  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class Pending:
    """What ``build`` makes of a spec with unknown values: built twice, from two different
    stand-ins for them, and for real as an Output.

    A part equal in both builds does not depend on an unknown value, so it is known now;
    only the parts that differ wait for the Output. A preview then shows ``image`` as
    unknown, not the whole Deployment spec.
    """

    first: Any
    second: Any
    final: pulumi.Output[Any]

    def pick(self, pick: Callable[[Any], Any]) -> Any:
        return leafwise(pick(self.first), pick(self.second), self.final.apply(pick))


def leafwise(first: Any, second: Any, final: pulumi.Output[Any]) -> Any:
    """``first`` where it equals ``second``; below that, the matching part of ``final``."""
    if type(first) is type(second) and first == second:
        return first
    if isinstance(first, dict) and isinstance(second, dict):
        one, other = cast("dict[Any, Any]", first), cast("dict[Any, Any]", second)
        if one.keys() == other.keys():
            return {k: leafwise(one[k], other[k], _item(final, k)) for k in one}
    if isinstance(first, (list, tuple)) and isinstance(second, (list, tuple)):
        one_seq, other_seq = cast("Sequence[Any]", first), cast("Sequence[Any]", second)
        if len(one_seq) == len(other_seq):
            items = [
                leafwise(a, b, _item(final, i))
                for i, (a, b) in enumerate(zip(one_seq, other_seq, strict=True))
            ]
            if isinstance(first, tuple):
                return type(cast("tuple[Any, ...]", first))(items)
            return items
    return final


def _item(final: pulumi.Output[Any], key: Any) -> pulumi.Output[Any]:
    """``final[key]``, as an Output."""
    return final.apply(lambda v: v[key])


def _deferred(leaves: Sequence[Leaf], problems: Sequence[Problem]) -> list[Leaf]:
    """The Outputs the spec refused (it holds some, such as secret values, as they are)."""
    return [
        (path, out)
        for path, out in leaves
        if any(_under(p.path, _paths([(path, out)])) for p in problems)
    ]


def _paths(leaves: Sequence[tuple[Path, Any]]) -> dict[str, None]:
    return {loc_path(path): None for path, _ in leaves}


def _under(path: str, prefixes: Mapping[str, Any]) -> bool:
    return any(path == key or path.startswith((key + ".", key + "[")) for key in prefixes)


def _refuse_structural(deferred: Sequence[tuple[Path, Any]], subject: str) -> None:
    problems = [
        Problem(
            loc_path(path),
            "must be known when the program runs, not an Output: it decides which objects "
            f"exist and their names; {_INSTEAD.get(str(path[0]), _INSTEAD[''])}",
        )
        for path, _ in deferred
        if path and path[0] in STRUCTURAL
    ]
    if problems:
        raise SpecError(problems, subject=subject)


# What to pass instead of an Output, by structural field.
_INSTEAD = {
    "namespace": "pass the namespace's name as a string, e.g. namespace=\"apps\" with "
    "k8s.core.v1.Namespace(\"apps\", metadata={\"name\": \"apps\"}) (an autonamed "
    "Namespace's name is unknown until `pulumi up`), and opts=pulumi.ResourceOptions("
    "depends_on=[ns]) to create it first",
    "name": "pass a plain string",
    "tools": "pass LanguageTool objects or {\"name\": ...} references, not an Output of them",
    "": "pass a plain value",
}


def _stand_in(
    data: Any,
    parse: Callable[[Any], Any],
    deferred: Sequence[tuple[Path, Any]],
    unlike: Any = None,
) -> Any:
    """``data`` with each unknown value replaced by one its field accepts; with ``unlike``,
    by another one than there (None when a field accepts only one)."""
    filled = data
    for path, _ in deferred:
        where = loc_path(path)
        taken = _at(unlike, path) if unlike is not None else _NOTHING
        for candidate in STAND_INS:
            if type(candidate) is type(taken) and candidate == taken:
                continue
            attempt = replaced(filled, path, candidate)
            try:
                parse(attempt)
            except SpecError as exc:
                if any(_under(p.path, {where: None}) for p in exc.problems):
                    continue
            filled = attempt
            break
        else:
            if unlike is not None:
                return None
    return filled


_NOTHING = object()


def _at(data: Any, path: Path) -> Any:
    for step in path:
        data = data[step]
    return data


def part(objects: Any, pick: Callable[[Any], R]) -> R | pulumi.Output[R]:
    """``pick(objects)``, or its Output when ``objects`` is an Output; of :class:`Pending`
    objects, known where it does not depend on an unknown value."""
    if isinstance(objects, Pending):
        return objects.pick(pick)
    if isinstance(objects, pulumi.Output):
        return cast("pulumi.Output[Any]", objects).apply(pick)
    return pick(objects)


def whole(objects: Any, pick: Callable[[Any], R]) -> R | pulumi.Output[R]:
    """Like :func:`part`, but all of it an Output as soon as any value in it is unknown."""
    if isinstance(objects, Pending):
        return objects.final.apply(pick)
    return part(objects, pick)
