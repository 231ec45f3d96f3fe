"""Pulumi mocks for users' unit tests of programs built on langop-infra.

Pulumi's documented pattern: ``pulumi.runtime.set_mocks(...)`` once per module, then
``@pulumi.runtime.test`` functions that build components and assert on their outputs. These
mocks answer as the real providers would: a Kubernetes object gets the id the kubernetes
provider gives (``<namespace>/<name>``, or ``<name>`` for a cluster-scoped object) and its
inputs back with a ``uid`` and ``resourceVersion``; a tool's schema sync reports the listing
given for that tool (phase ``Registered``, its names and hash), else stays ``Pending``; a
workload's rollout key is the fixed ``OFFLINE_KEY`` of :mod:`langop_infra.sync.rollout_key`.
Installed with :meth:`Mocks.monitor` (as the ``langop_mocks`` fixture does), every other output
a provider computes (a ``random`` resource's ``result``, a Kubernetes object's ``status``) is
unknown, never ``None``: no mock can know it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any, cast

import pulumi
from pulumi.runtime import mocks as pulumi_mocks, rpc
from pulumi.runtime.proto import resource_pb2

from langop_infra.core import _pulumi_sdk as pulumi_sdk
from langop_infra.offline._mock_engine import registered
from langop_infra.sync import rollout_key
from langop_infra.sync.provider import SyncOutputs

DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"
# Stable uids: two runs of the same test see the same outputs.
UID_NAMESPACE = uuid.UUID("6f1c1c8e-4a57-4c1e-9d0b-2a4f1e0c7b11")


class Mocks(pulumi.runtime.Mocks):
    """Answers registrations as the kubernetes provider and schema sync would.

    ``schemas`` maps a tool's name to the tools its server lists (``[{"name", "description",
    "inputSchema"}]``): that tool's sync is ``Registered`` with them. Every registration is
    kept in ``resources`` (``pulumi.runtime.MockResourceArgs``: ``typ``, ``name``,
    ``inputs``), in order, for assertions on objects no component attribute exposes.
    """

    def __init__(
        self,
        schemas: Mapping[str, Sequence[Mapping[str, object]]] | None = None,
        server_info: Mapping[str, object] | None = None,
    ) -> None:
        self.schemas = {name: [dict(t) for t in tools] for name, tools in (schemas or {}).items()}
        self.server_info = dict(server_info or {"name": "mock", "version": "0"})
        self.resources: list[pulumi.runtime.MockResourceArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, object]]:
        self.resources.append(args)
        state = dict(_inputs(args))
        if args.typ.startswith("kubernetes:"):
            return kubernetes_state(args.typ, args.name, state)
        key = rollout_key.offline_outputs(args.typ, state, rollout_key.OFFLINE_KEY)
        if key is not None:  # the fixed rollout_key.OFFLINE_KEY: digests stable run to run
            return f"{args.name}-id", key
        # An A2A peer's card sync (sync/card_sync.py) carries card_path: not a tool's sync.
        synced = {"endpoint", "service"} <= state.keys() and "card_path" not in state
        if args.typ == DYNAMIC_TYPE and synced:
            return self.sync_state(state)
        return f"{args.name}-id", state

    def sync_state(self, state: dict[str, object]) -> tuple[str, dict[str, object]]:
        """A schema sync's id and outputs: the listing given for the tool, else Pending."""
        tool = str(state.get("service") or "")
        listed = self.schemas.get(tool)
        if listed is None:
            result = SyncOutputs()
        else:
            listing = SimpleNamespace(
                tools=listed, server_info=self.server_info, protocol_version="2025-11-25"
            )
            result = SyncOutputs.registered(listing, {})
        return f"{state.get('namespace')}/{tool}", {**state, **result.as_dict()}

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, object], list[tuple[str, str]] | None]:
        return {}, None

    def monitor(self) -> pulumi_mocks.MockMonitor:
        """The monitor to install these mocks with, ``pulumi.runtime.set_mocks(mocks,
        monitor=mocks.monitor())``: outputs the mocks leave out come back unknown (the
        SDK's own monitor resolves them as ``None`` outside a preview)."""
        return _Monitor(self)

    def find(self, typ: str, name: str) -> dict[str, Any]:
        """The inputs of the latest registration of type ``typ`` (e.g.
        ``kubernetes:core/v1:ConfigMap``) whose object or logical name is ``name``: the
        current test's, as the mocks serve every test of the module."""
        for r in reversed(self.resources):
            if r.typ != typ:
                continue
            inputs = _inputs(r)
            metadata: Any = inputs.get("metadata") or {}
            if name in (r.name, metadata.get("name")):
                return dict(inputs)
        raise LookupError(f"no registration of {typ} named {name!r}: {self._why_not(typ)}")

    def _why_not(self, typ: str) -> str:
        """The likely cause of a failed ``find``: other mocks installed, or the names there are."""
        if _installed_mocks() is not self:
            return (
                "these mocks are not the ones Pulumi uses now: another pulumi.runtime."
                "set_mocks call (another test module's, or the langop_mocks fixture of a test "
                "that ran before) replaced them, and this test's resources went to those. "
                "In a run with more than one module, use the langop_mocks fixture in every "
                "test, or call set_mocks in a fixture of your own rather than at module level"
            )
        # A Kubernetes object by its own name, anything else by its logical name.
        names: list[str] = []
        for r in self.resources:
            metadata: Any = _inputs(r).get("metadata")
            if r.typ == typ:
                given = cast("dict[str, Any]", metadata) if isinstance(metadata, dict) else {}
                names.append(str(given.get("name") or r.name))
        if not names:
            return "nothing of that type was registered in this test"
        return f"registered of that type: {', '.join(sorted(set(names)))}"


def _installed_mocks() -> object:
    """The mocks Pulumi's runtime answers registrations with now, if any."""
    from langop_infra.core import _pulumi_sdk as pulumi_sdk

    return getattr(pulumi_sdk.current_monitor(), "mocks", None)


def _inputs(args: pulumi.runtime.MockResourceArgs) -> dict[str, Any]:
    """``args.inputs``, which the Pulumi SDK declares as a bare ``dict``."""
    return cast("dict[str, Any]", args.inputs)  # pyright: ignore[reportUnknownMemberType]


def kubernetes_state(typ: str, name: str, state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The id and outputs the kubernetes provider gives an object it created."""
    metadata = dict(state.get("metadata") or {})
    object_name = metadata.get("name") or name
    namespace = metadata.get("namespace")
    metadata.setdefault("name", object_name)
    metadata["uid"] = str(uuid.uuid5(UID_NAMESPACE, f"{typ}/{namespace}/{object_name}"))
    metadata["resourceVersion"] = "1"
    resource_id = f"{namespace}/{object_name}" if namespace else object_name
    return resource_id, {**state, "metadata": metadata}


class _Monitor(pulumi_mocks.MockMonitor):
    """Pulumi's mock monitor, with unknowns kept: a value unknown to the program reaches the
    mocks as unknown (not ``None``), and outputs a provider computes that the mocks leave out
    resolve as unknown, as the engine tells the SDK for a resource it could not know."""

    def __init__(self, mocks: Mocks) -> None:
        super().__init__(mocks)
        self.langop_mocks = mocks

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        pulumi_sdk.ensure_event_loop()
        args = pulumi.runtime.MockResourceArgs(
            typ=request.type,
            name=request.name,
            inputs=rpc.deserialize_properties(request.object, keep_unknowns=True),
            provider=request.provider,
            resource_id=request.importId,
            custom=bool(request.custom),
        )
        id_, state = self.langop_mocks.new_resource(args)
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(urn, id_, state)
        obj = pulumi_sdk.sync_await(rpc.serialize_properties(state, {}))
        return registered(urn, id_, obj, str(request.type), bool(request.custom))
