"""The create/read/update/diff shape both sync resources share (``ToolSchemaSync`` and
``AgentCardSync``): each call of the engine is one sync of what the inputs name.

- ``check`` refuses the known inputs a subclass finds unusable (preview-time unknowns are
  left for later);
- ``create`` syncs and takes ``<namespace>/<service>`` as the id;
- ``read`` (``pulumi refresh``) syncs again from the previous outputs, which carry every
  input, never failing the refresh (``required`` off), so drift is recorded;
- ``update`` syncs with the previous outputs at hand (what to keep when the sync fails);
- ``diff`` reports a change when an input changed or, inputs equal, when the live answer's
  hash differs from the stored one (a probe bounded by :data:`DIFF_PROBE_TIMEOUT`; an
  unreachable peer at preview time is no change);
- ``delete`` has nothing to remove.

The providers keep no state of their own, so dill pickles them by module and class name;
those names stay where deployed state put them (``langop_infra.sync.provider``,
``langop_infra.sync.card_sync``) and this module holds only what they share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, cast

import pulumi.dynamic as dyn
from pulumi.output import Unknown
from pulumi.runtime import rpc

UNKNOWN = rpc.UNKNOWN  # pulumi's marker for a preview-time unknown
DIFF_PROBE_TIMEOUT = 5.0


def plain(value: object) -> object:
    """``value`` with Pulumi's secret wrappers removed (the provider needs the values)."""
    value = rpc.unwrap_rpc_secret(value)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in cast("Mapping[object, object]", value).items()}
    if isinstance(value, list):
        return [plain(v) for v in cast("list[object]", value)]
    return value


def plain_props(props: Mapping[str, object]) -> dict[str, Any]:
    """:func:`plain` of a property map (a map stays a map), its values as the engine's
    untyped property values."""
    return cast("dict[str, object]", plain(props))


def has_unknown(value: object) -> bool:
    """Whether a preview-time unknown hides in ``value`` (the servicer hands ``Unknown``
    objects to check and diff; the wire form is the :data:`UNKNOWN` string)."""
    if isinstance(value, Mapping):
        return any(has_unknown(v) for v in cast("Mapping[object, object]", value).values())
    if isinstance(value, (list, tuple)):
        return any(has_unknown(v) for v in cast("Sequence[object]", value))
    return isinstance(value, Unknown) or value == UNKNOWN


def _diff(changes: bool) -> dyn.DiffResult:
    # Nothing is ever replaced: a sync resource is updated in place.
    return dyn.DiffResult(changes=changes, replaces=[], stables=[], delete_before_replace=False)


class SyncProvider(dyn.ResourceProvider):
    """A stateless provider whose create, read and update are one sync each. A subclass
    names its inputs and the output holding the stored hash, and gives the sync itself, the
    live hash for ``diff``, how two input values compare and which inputs it refuses."""

    inputs: ClassVar[Sequence[str]] = ()
    """The inputs ``diff`` compares (every one is also an output)."""
    hash_output: ClassVar[str] = ""
    """The output holding the hash of what the last good sync recorded."""
    retry_failed: ClassVar[bool] = False
    """Whether a resource left in phase Error shows as a change once the peer answers again
    (so ``pulumi up`` tries it again); while it cannot be reached, nothing changes."""

    def sync(
        self, inputs: Mapping[str, object], previous: Mapping[str, object] | None = None
    ) -> dict[str, object]:
        """Sync once: the outputs. Raises only for a failed ``required`` sync."""
        raise NotImplementedError

    def live_hash(self, inputs: Mapping[str, object], timeout: float) -> str:
        """The hash of what the peer answers now, within ``timeout`` seconds."""
        raise NotImplementedError

    def same(self, old: object, new: object) -> bool:
        """Whether two values of one input are the same (an unset input arrives missing,
        None or empty depending on the path it took)."""
        raise NotImplementedError

    def problems(
        self, known: Mapping[str, object], news: Mapping[str, object]
    ) -> list[tuple[str, str]]:
        """(input, reason) for each known input this provider cannot use."""
        return []

    def check(self, _olds: dict[str, object], news: dict[str, object]) -> dyn.CheckResult:
        known = {k: v for k, v in plain_props(news).items() if not has_unknown(v)}
        failures = [dyn.CheckFailure(key, reason) for key, reason in self.problems(known, news)]
        return dyn.CheckResult(news, failures)

    def create(self, props: dict[str, object]) -> dyn.CreateResult:
        outs = self.sync(props)
        return dyn.CreateResult(id_=f"{props.get('namespace')}/{props.get('service')}", outs=outs)

    def read(self, id_: str, props: dict[str, object]) -> dyn.ReadResult:
        # The engine passes the previous outputs: they hold every input, credentials included.
        # A refresh never fails for a down peer, but the outputs keep the input as given:
        # otherwise every refresh of a required sync would report `required` changed.
        outs = self.sync({**props, "required": False}, props)
        if "required" in props:
            outs["required"] = props["required"]
        return dyn.ReadResult(id_=id_, outs=outs)

    def update(
        self, _id: str, olds: dict[str, object], news: dict[str, object]
    ) -> dyn.UpdateResult:
        return dyn.UpdateResult(outs=self.sync(news, olds))

    def diff(self, _id: str, olds: dict[str, object], news: dict[str, object]) -> dyn.DiffResult:
        olds, news = plain_props(olds), plain_props(news)
        if has_unknown(news):
            return _diff(True)
        changed = [k for k in self.inputs if not self.same(olds.get(k), news.get(k))]
        return _diff(bool(changed) or self.changed_live(olds, news))

    def changed_live(self, olds: Mapping[str, object], news: Mapping[str, object]) -> bool:
        """Inputs equal: whether the peer's live answer differs from the stored one."""
        try:
            timeout = min(DIFF_PROBE_TIMEOUT, float(cast("float | str", news.get("timeout") or 10)))
            live: str | None = self.live_hash(news, timeout)
        except Exception:  # unreachable or refused at preview time: nothing to compare
            live = None
        if live is None:
            # Still unreachable: no change, so a preview of a stack whose tool is down stays
            # quiet (`--expect-no-changes` holds); the real engine showed a perpetual update.
            return False
        failed = self.retry_failed and olds.get("phase") == "Error"
        return failed or live != olds.get(self.hash_output)

    def delete(self, _id: str, _props: dict[str, object]) -> None:
        return None
