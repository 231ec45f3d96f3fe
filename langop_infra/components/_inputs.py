"""Component arguments that hold ``pulumi.Output`` values: validate what is known now, and
the rest when it resolves.

``LanguageTool("t", image=build.image_name)`` must work. A value unknown at preview time
cannot be checked before registration, so its checks run in an ``apply`` and fail there with
the field path; every value that is known is still checked before anything is registered.
The structure of a component (which objects exist, their names) must not depend on an Output:
fields that decide it are refused as Outputs up front. Each Output is judged on its own
(:class:`Pending`): a part of an object waits only for the values it is made from.
"""

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, cast

import pulumi

from langop_infra.components._secret_routing import (
    guarded,
    route_header_values,
    secret_capable,
)
from langop_infra.components._stand_ins import (
    alternative,
    replaced,
    under,
    with_stand_ins,
)
from langop_infra.config._structure import structural_keys
from langop_infra.core._construction import construction_site
from langop_infra.core.problems import Problem, SpecError, loc_path

S = TypeVar("S")
R = TypeVar("R")
Path = tuple[int | str, ...]
# An Output inside a component's arguments, with its path there.
Leaf = tuple[Path, pulumi.Output[Any]]

# Fields that decide which objects exist or what they are called, in both spellings.
STRUCTURAL = structural_keys()


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
    data = route_header_values(data)
    if "container_args" in data:
        data["args"] = data.pop("container_args")
    # ``labels=None`` is how Python says "not given" for a field whose default is no None.
    return {k: v for k, v in data.items() if v is not None or not _none_means_unset(spec, k)}


def _none_means_unset(spec: type[Any], key: str) -> bool:
    fields: Mapping[str, Any] = getattr(spec, "model_fields", {})
    field = fields.get(key) or next(
        (f for f in fields.values() if getattr(f, "alias", None) == key), None
    )
    if field is None:
        return False
    return field.default_factory is not None or field.default not in (None, Ellipsis)


def refuse_outputs(data: Mapping[str, object], subject: str, why: str) -> None:
    """Every Output in ``data`` a field error: the component needs its values now."""
    problems = [
        Problem(loc_path(path), f"must be known when the program runs, not an Output: {why}")
        for path, _ in output_leaves(data)
    ]
    if problems:
        raise SpecError(problems, subject=subject)


# Mappings whose keys decide env entries and the workload's Secret.
WHOLE_MAPPINGS = frozenset({"env", "secret_env", "secretEnv"})


def refuse_whole_lists(data: Mapping[str, object], spec: type[object], subject: str) -> None:
    """A field that takes a list (or an env mapping), given as one Output: a field error
    (which objects, entries and Secret keys exist follows from it), with the fix."""
    fields: Mapping[str, object] = getattr(spec, "model_fields", {})
    problems = [
        Problem(
            key,
            "expected a list, got an Output; pass a list here (its items' own values may be "
            "Outputs, e.g. a url), since the list decides which objects and policies exist",
        )
        for key, value in data.items()
        if isinstance(value, pulumi.Output) and _is_list_field(fields, key)
    ]
    problems += [
        Problem(
            key,
            "expected a mapping, got an Output; pass a mapping here (its values may be "
            "Outputs: a secret one goes into the workload's Secret), since its keys decide "
            "the env entries",
        )
        for key, value in data.items()
        if isinstance(value, pulumi.Output) and key in WHOLE_MAPPINGS
    ]
    if problems:
        raise SpecError(problems, subject=subject)


def _is_list_field(fields: Mapping[str, Any], key: str) -> bool:
    field = fields.get(key) or next(
        (f for f in fields.values() if getattr(f, "alias", None) == key), None
    )
    if field is None:
        return key in {"tools", "mcp_servers", "http_tools", "models"}
    annotation = field.annotation
    origins = {getattr(annotation, "__origin__", None)} | {
        getattr(a, "__origin__", None) for a in getattr(annotation, "__args__", ())
    }
    return bool(origins & {list, tuple}) or annotation in (list, tuple)


def output_leaves(data: object, path: Path = ()) -> Iterator[Leaf]:
    """Every Output inside nested mappings and lists, with its path."""
    if isinstance(data, pulumi.Output):
        yield path, cast("pulumi.Output[Any]", data)
    elif isinstance(data, Mapping):
        for key, value in cast("Mapping[str, Any]", data).items():
            yield from output_leaves(value, (*path, key))
    elif isinstance(data, (list, tuple)):
        for index, value in enumerate(cast("Sequence[Any]", data)):
            yield from output_leaves(value, (*path, index))


def resolve(
    data: Mapping[str, object],
    parse: Callable[[Any], S],
    build: Callable[[S], R],
    structure: Callable[[S], Any],
    subject: str,
    late: frozenset[str] = frozenset(),
) -> tuple[S, "R | Pending"]:
    """The parsed spec and what ``build`` makes of it, :class:`Pending` when a value is
    unknown now.

    With no Output in a place the spec cannot hold one, this is ``build(parse(data))``.
    ``late`` names structural fields this component builds from as they resolve
    (``namespace``: see :mod:`langop_infra.components._namespace`).
    """
    leaves = list(output_leaves(data))
    try:
        spec = parse(data)
    except SpecError as exc:
        deferred = _deferred(leaves, exc.problems)
        known = [
            p
            for p in exc.problems
            if not any(_related(p.path, loc_path(path)) for path, _ in deferred)
        ]
        if known or not deferred:
            raise SpecError(known or exc.problems, subject=subject) from None
    else:
        return spec, build(spec)
    _refuse_structural([d for d in deferred if not (d[0] and d[0][0] in late)], subject)
    # The user's line that built the component, for an error found when a value resolves.
    where = construction_site()
    stand_in = with_stand_ins(data, parse, deferred, subject)
    try:
        spec = parse(stand_in)
    except SpecError as exc:
        # Another field depends on an unknown value (a volume mount on a volume's name).
        raise SpecError(_needed_now(deferred, exc.problems), subject=subject) from None

    def rebuild(values: Mapping[int, object]) -> R:
        filled: object = stand_in
        for index, value in values.items():
            filled = replaced(filled, deferred[index][0], value)
        try:
            real = parse(filled)
        except SpecError as exc:
            raise SpecError(exc.problems, subject=subject, where=where) from None
        if structure(real) != structure(spec):
            problem = Problem("", "an Output changed the component's structure")
            raise SpecError([problem], subject=subject, where=where)
        return build(real)

    variants = tuple(
        _EVERY if (alt := alternative(stand_in, parse, spec, path)) is None else build(parse(alt))
        for path, _ in deferred
    )
    outputs = tuple(
        out if secret_capable(path) else guarded(out, path, subject, where)
        for path, out in deferred
    )
    return spec, Pending(build(spec), variants, outputs, rebuild)


# A variant standing for "every part may depend on this value" (no second stand-in fits).
_EVERY: Any = object()


@dataclasses.dataclass(frozen=True)
class Pending:
    """What ``build`` makes of a spec with unknown values, known where it can be.

    ``base`` is built from stand-ins for the unknown values; ``variants[i]`` from the same
    stand-ins but another one for value ``i``. A part equal in ``base`` and every variant
    depends on no unknown value: it is known now. A part that differs waits only for the
    values whose variants differ there (``rebuild`` makes it from their real values), so a
    preview shows ``image`` as unknown, not the whole Deployment spec, and a value known at
    preview is shown even when another one is not.
    """

    base: Any
    variants: tuple[Any, ...]
    outputs: tuple[pulumi.Output[Any], ...]
    rebuild: Callable[[Mapping[int, Any]], Any]

    @property
    def final(self) -> pulumi.Output[Any]:
        """All of it, once every value is known."""
        return pulumi.Output.all(*self.outputs).apply(
            lambda values: self.rebuild(dict(enumerate(values)))
        )

    def map(self, fn: Callable[[Any], object]) -> "Pending":
        """What ``fn`` makes of it, part by part as known."""
        return Pending(
            fn(self.base),
            tuple(v if v is _EVERY else fn(v) for v in self.variants),
            self.outputs,
            lambda values: fn(self.rebuild(values)),
        )

    def pick(self, pick: Callable[[Any], object]) -> Any:
        return self._leafwise(
            pick(self.base), [v if v is _EVERY else pick(v) for v in self.variants], pick
        )

    def depends(self, pick: Callable[[Any], object]) -> list[int]:
        """The values that ``pick`` of it depends on."""
        base = pick(self.base)
        return [i for i, v in enumerate(self.variants) if v is _EVERY or not _same(pick(v), base)]

    def later(self, indexes: Sequence[int], pick: Callable[[Any], object]) -> pulumi.Output[Any]:
        """``pick`` of it, made from the real values of ``indexes`` once they are known."""
        return pulumi.Output.all(*[self.outputs[i] for i in indexes]).apply(
            lambda values: pick(self.rebuild(dict(zip(indexes, values, strict=True))))
        )

    def _leafwise(self, base: Any, variants: list[Any], pick: Callable[[Any], object]) -> Any:
        """``base`` where every variant equals it; below that, the parts that differ, each an
        Output of only the values it depends on."""
        if all(v is not _EVERY and _same(v, base) for v in variants):
            return base
        alike = [v for v in variants if v is not _EVERY]
        if len(alike) < len(variants):
            # A value no second stand-in could vary may change any part, even which keys
            # there are: the whole part waits for the real values.
            indexes = [i for i, v in enumerate(variants) if v is _EVERY or not _same(v, base)]
            return self.later(indexes, pick)
        if isinstance(base, dict) and all(
            isinstance(v, dict) and v.keys() == base.keys() for v in alike
        ):
            mapping = cast("dict[Any, Any]", base)
            return {
                k: self._leafwise(
                    mapping[k],
                    [v if v is _EVERY else v[k] for v in variants],
                    _at(pick, k),
                )
                for k in mapping
            }
        sequence = cast("Sequence[Any]", base) if isinstance(base, (list, tuple)) else None
        if sequence is not None and all(
            isinstance(v, (list, tuple)) and len(cast("Sequence[Any]", v)) == len(sequence)
            for v in alike
        ):
            items: list[Any] = [
                self._leafwise(
                    item,
                    [v if v is _EVERY else v[i] for v in variants],
                    _at(pick, i),
                )
                for i, item in enumerate(sequence)
            ]
            return type(cast("tuple[Any, ...]", base))(items) if isinstance(base, tuple) else items
        indexes = [i for i, v in enumerate(variants) if v is _EVERY or not _same(v, base)]
        return self.later(indexes, pick)


def with_leaves(spec: object, data: object, build: Callable[[Any, Any], R]) -> "R | Pending":
    """``build(spec, data)`` where ``data`` (a sidecar's container) holds Outputs at some
    leaves and ``spec`` may be :class:`Pending`: each part waits only for the values, of
    either, it is made from. Plain ``build(spec, data)`` when neither holds one."""
    leaves = list(output_leaves(data))
    if not leaves and not isinstance(spec, Pending):
        return build(spec, data)
    pending = spec if isinstance(spec, Pending) else Pending(spec, (), (), lambda _: spec)
    count = len(pending.outputs)

    def filled(values: Mapping[int, object], second: int | None = None) -> object:
        result = data
        for index, (path, _) in enumerate(leaves):
            stand_in = f"placeholder-leaf-{index}" + ("-b" if index == second else "")
            result = replaced(result, path, values.get(index, stand_in))
        return result

    def rebuild(values: Mapping[int, Any]) -> R:
        own = {i: v for i, v in values.items() if i < count}
        leaf_values = {i - count: v for i, v in values.items() if i >= count}
        return build(pending.rebuild(own) if own else pending.base, filled(leaf_values))

    base = build(pending.base, filled({}))
    variants = tuple(v if v is _EVERY else build(v, filled({})) for v in pending.variants) + tuple(
        build(pending.base, filled({}, second=i)) for i in range(len(leaves))
    )
    outputs = (*pending.outputs, *(out for _, out in leaves))
    return Pending(base, variants, outputs, rebuild)


def _at(pick: Callable[[Any], Any], key: object) -> Callable[[Any], object]:
    """``pick``, then the part at ``key``."""
    return lambda whole: pick(whole)[key]


def _same(first: Any, second: Any) -> bool:
    return type(first) is type(second) and first == second


def _deferred(leaves: Sequence[Leaf], problems: Sequence[Problem]) -> list[Leaf]:
    """The Outputs the spec refused (it holds some, such as secret values, as they are),
    at their path or at a field holding them (``resources``, checked as a whole)."""
    return [
        (path, out)
        for path, out in leaves
        if any(_related(p.path, loc_path(path)) for p in problems)
    ]


def _related(problem: str, leaf: str) -> bool:
    """Whether a problem at ``problem`` may come from the value at ``leaf``."""
    return under(problem, {leaf: None}) or (bool(problem) and under(leaf, {problem: None}))


def _refuse_structural(deferred: Sequence[tuple[Path, object]], subject: str) -> None:
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
    "namespace": 'pass the namespace\'s name as a string, e.g. namespace="apps" with '
    'k8s.core.v1.Namespace("apps", metadata={"name": "apps"}) (an autonamed '
    "Namespace's name is unknown until `pulumi up`), and opts=pulumi.ResourceOptions("
    "depends_on=[ns]) to create it first",
    "name": "pass a plain string",
    "tools": 'pass LanguageTool objects or {"name": ...} references, not an Output of them',
    "": "pass a plain value",
}


def _needed_now(deferred: Sequence[Leaf], problems: Sequence[Problem]) -> list[Problem]:
    """Problems for unknown values other fields depend on (never quoting a stand-in)."""
    others = ", ".join(sorted({p.path for p in problems})) or "another field"
    return [
        Problem(
            loc_path(path),
            f"must be known when the program runs, not an Output: {others} depends on it; "
            "pass a plain value",
        )
        for path, _ in deferred
    ]


def part(objects: object, pick: Callable[[Any], R]) -> R | pulumi.Output[R]:
    """``pick(objects)``, or its Output when ``objects`` is an Output; of :class:`Pending`
    objects, known where it does not depend on an unknown value."""
    if isinstance(objects, Pending):
        return objects.pick(pick)
    if isinstance(objects, pulumi.Output):
        return cast("pulumi.Output[Any]", objects).apply(pick)
    return pick(objects)


def whole(objects: object, pick: Callable[[Any], R]) -> R | pulumi.Output[R]:
    """Like :func:`part`, but all of it an Output as soon as any value in it is unknown."""
    if isinstance(objects, Pending):
        return objects.final.apply(pick)
    return part(objects, pick)


def exists(objects: "Pending", pick: Callable[[Any], object]) -> bool | pulumi.Output[bool]:
    """Whether ``pick(objects)`` is there (not None): an Output of it when that depends on a
    value not known now, as a PodDisruptionBudget depends on ``replicas``."""

    def present(built: object) -> bool:
        return pick(built) is not None

    indexes = objects.depends(present)
    return objects.later(indexes, present) if indexes else present(objects.base)
