"""Run a Pulumi program in-process under the SDK's mock engine and record what it registers.

No CLI, no backend, no cluster: every resource registration is answered locally, and each
Kubernetes object comes out as the manifest Kubernetes would receive. Dynamic resources
(schema sync) are recorded but never run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func, wait_for_rpcs

from langop_infra.core import _pacing as pacing, _pulumi_sdk as pulumi_sdk, _yaml_io as yaml_io
from langop_infra.core._gc_tuning import tuned_for_run
from langop_infra.core._program_index import in_own_program
from langop_infra.offline import _secret_state as secret_state, _yaml_groups as yaml_groups
from langop_infra.offline._engine_values import (
    UNKNOWN_MARKER,
    Secret,
    to_manifest,
)
from langop_infra.sync import rollout_key

DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"
STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"
UNKNOWN = rpc.UNKNOWN
# Workloads (tools, agents) between two catch-ups with the engine: often enough that pending
# registrations never pile up (peak memory: benchmarks/README.md), rarely enough that each
# wait answers a batch of a few hundred registrations.
CATCH_UP_EVERY = 50


@dataclass
class Registration:
    """One resource as the engine saw it: type, logical name, parent, dependencies, inputs."""

    urn: str
    type: str
    name: str
    parent: str
    dependencies: list[str]
    inputs: dict[str, Any]
    custom: bool

    @property
    def is_kubernetes(self) -> bool:
        return self.custom and self.type.startswith("kubernetes:")


@dataclass
class ProgramRun:
    """What a run registered and logged, and the stack outputs it exported."""

    registrations: list[Registration] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    # What the program logged with pulumi.log.warn: `pulumi up` shows these as warnings.
    warnings: list[str] = field(default_factory=list)
    exports: dict[str, Any] = field(default_factory=dict, repr=False)
    _outputs: dict[str, Any] | None = field(default=None, init=False, repr=False)

    @property
    def outputs(self) -> dict[str, Any]:
        """The exports with every Output resolved, on first use: ``render`` never reads
        them, and resolving thousands of them is a noticeable part of a large run."""
        if self._outputs is None:
            self._outputs = _resolve_exports(self.exports)
        return self._outputs

    def kubernetes(self) -> list[Registration]:
        return [r for r in self.registrations if r.is_kubernetes]

    def by_type(self, type_: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_]

    def manifests(self) -> list[dict[str, Any]]:
        """Every Kubernetes object, secrets redacted, in registration order."""
        # A burst of new dicts over the run's large live heap: without tuning, the collector
        # would rescan that heap many times over.
        with tuned_for_run():
            return [to_manifest(r.inputs) for r in self.kubernetes()]


def engine_computes(type_: str, custom: bool) -> bool:
    """Whether the engine fills in this resource's outputs beyond its inputs: a custom
    resource of a provider (kubernetes, random, aws, ...). Not a dynamic resource (ours, whose
    outputs the mocks give in full), a StackReference (the caller gives its outputs) or a
    provider itself (its outputs are its inputs)."""
    return custom and not (
        type_ in (DYNAMIC_TYPE, STACK_REFERENCE_TYPE) or type_.startswith("pulumi:providers:")
    )


# The response's `unknown`: newer SDKs only (the floor, 3.237, has no such field).
_SAYS_UNKNOWN = "unknown" in resource_pb2.RegisterResourceResponse.DESCRIPTOR.fields_by_name


def registered(urn: str, id_: str, obj: Any, type_: str, custom: bool) -> Any:
    """The engine's answer to a registration. With ``unknown``, every output the answer
    leaves out is one the provider computes: the SDK resolves it as unknown also as
    `pulumi up` (at preview it always does). An SDK too old to read ``unknown`` resolves such
    outputs as None outside a preview."""
    if not _SAYS_UNKNOWN:
        return resource_pb2.RegisterResourceResponse(urn=urn, id=id_, object=obj)
    return resource_pb2.RegisterResourceResponse(
        urn=urn, id=id_, object=obj, unknown=engine_computes(type_, custom)
    )


class _Mocks(pulumi.runtime.Mocks):
    """Answers registrations as the engine does at preview for resources to be created.

    A resource of another kind (a Namespace or Service of the user's, another provider's
    resource with no plugin here) gets an unknown id and, as outputs, its inputs only:
    everything its provider computes (an autonamed name, a Service's cluster IP, a random
    suffix) stays unknown at preview.
    """

    def __init__(
        self,
        dynamic_state: Callable[[dict[str, Any]], dict[str, Any]] | None,
        stack_outputs: Mapping[str, Mapping[str, Any]] | None = None,
        preview: bool = False,
        rollout_key: str | None = None,
    ) -> None:
        self.rollout_key = rollout_key
        self.dynamic_state = dynamic_state
        self.stack_outputs = stack_outputs or {}
        self.preview = preview

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        state = dict(args.inputs)
        if args.typ == STACK_REFERENCE_TYPE:
            # Another stack's outputs, as the caller supplies them (none: an empty stack).
            outputs = dict(self.stack_outputs.get(state.get("name", ""), {}))
            return state.get("name", args.name), {**state, "outputs": outputs}
        # At preview (every render) unknown unless the caller holds a key: a digest under a
        # key anyone knows would be a plain hash. A run as `pulumi up` (tests) has a key.
        default = UNKNOWN if self.preview else rollout_key.OFFLINE_KEY
        key = rollout_key.offline_outputs(args.typ, state, self.rollout_key or default)
        if key is not None:
            return f"{args.name}-id", key
        if args.typ == DYNAMIC_TYPE:
            # Never run: a dynamic resource stays Pending unless the caller says otherwise.
            state.update({"phase": "Pending"})
            if self.dynamic_state is not None:
                state.update(self.dynamic_state(state))
            return f"{args.name}-id", state
        if args.typ == secret_state.SECRET_TYPE:
            state = secret_state.checked(state)
        if args.typ.startswith("kubernetes:"):
            state = _kubernetes_state(args.typ, state)
        # At preview a new resource's id is unknown (an empty id); a run as `pulumi up` knows it.
        return ("" if self.preview else f"{args.name}-id"), state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list | None]:
        # The SDK reads the second item as a list of failures: None crashed every invoke.
        if args.token == "kubernetes:yaml:decode":  # the v1 ConfigGroup's and ConfigFile's
            return {"result": yaml_groups.decoded(str(args.args.get("text") or ""))}, []
        return {}, []


# Metadata the API server fills in.
_ASSIGNED = ("uid", "creationTimestamp")


def _kubernetes_state(type_: str, state: dict[str, Any]) -> dict[str, Any]:
    """A Kubernetes object's outputs at preview: its inputs, with what the provider or the
    cluster fills in unknown (an autonamed object's name, a Service's cluster IP, status).

    An unknown value makes its whole top-level field unknown, as in the SDK; a field the
    program gave stays as given.
    """
    state = {**state, "status": UNKNOWN}
    metadata = state.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        metadata = {**(metadata or {}), "name": UNKNOWN}
    # What the API server assigns, unknown offline as at preview (a nested unknown leaves
    # the rest of metadata known): ``ns.metadata.uid`` is never None.
    state["metadata"] = {**metadata, **dict.fromkeys(_ASSIGNED, UNKNOWN)}
    spec = state.get("spec")
    service = type_ == "kubernetes:core/v1:Service"
    if service and isinstance(spec, Mapping) and not spec.get("clusterIP"):
        state["spec"] = {**spec, "clusterIP": UNKNOWN}
    return state


def _autonamed(type_: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """A Kubernetes object given no ``metadata.name``: the provider names it at ``pulumi up``
    (``<logical name>-<random suffix>``), so at preview its name is there, unknown."""
    if not type_.startswith("kubernetes:") or "kind" not in inputs or "apiVersion" not in inputs:
        return inputs  # not an object (the provider, a Helm release)
    metadata = inputs.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("name"):
        return inputs
    return {**inputs, "metadata": {**(metadata or {}), "name": UNKNOWN}}


class _RecordingMonitor(mocks.MockMonitor):
    """The SDK's mock monitor, also keeping each registration's parent and dependencies."""

    def __init__(self, mocks_: _Mocks, run: ProgramRun) -> None:
        super().__init__(mocks_)
        self.run = run
        self._local = threading.local()
        self._loops: list[asyncio.AbstractEventLoop] = []
        self._lock = threading.Lock()

    def _thread_loop(self) -> asyncio.AbstractEventLoop:
        """This worker thread's event loop, owned by the monitor so that it gets closed.

        Not made the thread's current loop: the engine's worker threads outlive the run, and
        a closed current loop would break whoever runs on them next.
        """
        loop = getattr(self._local, "loop", None)
        if loop is None:
            loop = asyncio.new_event_loop()
            self._local.loop = loop
            with self._lock:
                self._loops.append(loop)
        return loop

    def close(self) -> None:
        with self._lock:
            for loop in self._loops:
                # A program that failed may leave a registration running on a worker: its
                # loop is left to the collector, so that the failure, not "Cannot close a
                # running event loop", is what the run reports. Asked, not checked first: the
                # worker may start the loop between a check and the close.
                with contextlib.suppress(RuntimeError):
                    loop.close()
            self._loops.clear()

    def _register_children(self, urn: str, type_: str, name: str, inputs: dict[str, Any]) -> None:
        """The objects of a yaml/v2 group, registered as the provider does at ``pulumi up``."""
        try:
            found = yaml_groups.children(type_, name, inputs, Path.cwd())
        except (OSError, ValueError, yaml_io.YAMLError) as exc:
            self.run.warnings.append(
                f"{type_} {name}: its YAML could not be read ({exc}); its objects are neither "
                "rendered nor judged"
            )
            return
        preview = getattr(self.mocks, "preview", False)
        for child_type, child_name, obj in found:
            self.run.registrations.append(
                Registration(
                    urn=self.make_urn(urn, child_type, child_name),
                    type=child_type,
                    name=child_name,
                    parent=urn,
                    dependencies=[],
                    inputs=_autonamed(child_type, obj) if preview else obj,
                    custom=True,
                )
            )

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        loop = self._thread_loop()
        # keep_unknowns: a value unknown to the program stays unknown in what `pulumi up`
        # registers (else the SDK reads it as None outside a preview).
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        if request.custom and getattr(self.mocks, "preview", False):
            inputs = _autonamed(request.type, inputs)
        self.run.registrations.append(
            Registration(
                urn=urn,
                type=request.type,
                name=request.name,
                parent=request.parent,
                dependencies=list(request.dependencies),
                inputs=inputs,
                custom=bool(request.custom),
            )
        )
        if request.type in yaml_groups.GROUP_TYPES:
            self._register_children(urn, request.type, request.name, inputs)
        args = mocks.MockResourceArgs(
            typ=request.type, name=request.name, inputs=inputs, custom=bool(request.custom)
        )
        id_, state = self.mocks.new_resource(args)
        obj = loop.run_until_complete(rpc.serialize_properties(state, {}))
        self.resources[urn] = mocks.MockMonitor.ResourceRegistration(urn, id_ or "", state)
        return registered(urn, id_ or "", obj, request.type, bool(request.custom))


class _CatchUp:
    """Every ``every`` workloads, wait until the engine has answered every registration."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.built = 0

    def __call__(self) -> None:
        self.built += 1
        if self.built % self.every == 0:
            pulumi_sdk.sync_await(wait_for_rpcs(await_all_outstanding_tasks=False))


class _LogCapture(logging.Handler):
    def __init__(self, run: ProgramRun) -> None:
        super().__init__(logging.DEBUG)
        self.run = run

    def emit(self, record: logging.LogRecord) -> None:
        self.run.logs.append(record.getMessage())
        if record.levelno >= logging.WARNING:
            # pulumi.log.warn from a component, e.g. a user env var overriding an injected one
            self.run.warnings.append(record.getMessage())


def run_program(
    program: Callable[[], object],
    *,
    project: str = "langop-infra",
    stack: str = "dev",
    config: Mapping[str, str] | None = None,
    secret_keys: list[str] | None = None,
    preview: bool = False,
    dynamic_state: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    into: ProgramRun | None = None,
    stack_outputs: Mapping[str, Mapping[str, object]] | None = None,
    rollout_key: str | None = None,
) -> ProgramRun:
    """Run ``program`` under the mock engine with the given stack config.

    ``config`` maps full keys (``langop-infra:tools``) to strings, as the CLI passes them.
    Exceptions from the program propagate unchanged. ``dynamic_state`` supplies the outputs
    of dynamic resources (they are not run); ``stack_outputs`` the outputs of other stacks
    by ``<org>/<project>/<stack>``, for StackReferences; ``rollout_key`` the workloads'
    rollout key (hex; None: unknown at preview, as at a first ``pulumi preview``, and the
    public ``OFFLINE_KEY`` in a run as ``pulumi up``, which only tests make). Pass ``into``
    to keep what was registered even when the program raises. Every :data:`CATCH_UP_EVERY`
    workloads the components build (:func:`pacing.workload_built`), the engine answers every
    pending registration before the program goes on.
    """
    run = into if into is not None else ProgramRun()
    # Not from logging.getLogger: the registry would keep every run alive for good.
    logger = logging.Logger("langop_infra.offline._mock_engine", logging.DEBUG)
    logger.addHandler(_LogCapture(run))

    # The caller's loop when there is one (Outputs made before the run live on it); one
    # otherwise, as asyncio.run() elsewhere (e.g. an MCP call) leaves none behind.
    pulumi_sdk.ensure_event_loop()
    pulumi_sdk.clear_root()
    pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys or []))
    mocks_ = _Mocks(dynamic_state, stack_outputs, preview, rollout_key)
    monitor = _RecordingMonitor(mocks_, run)
    pulumi.runtime.set_mocks(
        mocks_,
        project=project,
        stack=stack,
        preview=preview,
        logger=logger,
        monitor=monitor,
    )
    pulumi_sdk.clear_run_state()

    root = settings.get_root_resource()
    try:
        with pacing.paced(_CatchUp(CATCH_UP_EVERY)), pulumi_sdk.without_stack_traces():
            in_own_program(lambda: _run_with_loop_stopped(program))
        run.exports = dict(getattr(root, "outputs", {}) or {})
    finally:
        pulumi_sdk.clear_root()
        monitor.close()
    return run


def _run_with_loop_stopped(program: Callable[[], object]) -> None:
    """Call ``program`` outside the event loop, as Pulumi's own mocked tests build resources,
    then let the SDK wait for every registration and raise what the program raised.

    A catch-up then runs the loop itself. Inside a running loop it would re-enter it, and the
    SDK keeps the loop's ready queue as long as it was on entry by adding a dummy handle for
    each handle run; every catch-up of one long program step counts the dummies of the
    catch-ups before it, so their cost grew with the square of the program's size.
    """
    try:
        result = program()
    except BaseException as exc:  # raised again by the SDK, after its waits
        failure = exc

        def finish() -> Any:
            raise failure

    else:

        def finish() -> Any:
            return result

    pulumi_sdk.sync_await(run_pulumi_func(finish))


def _resolve_exports(exports: Mapping[str, object]) -> dict[str, Any]:
    """Resolve on this thread's loop; on a private one if a command already closed it (the
    run's Outputs are settled, so any loop can read them)."""
    closed = False
    with contextlib.suppress(RuntimeError):  # no loop at all: sync_await makes one
        closed = asyncio.get_event_loop().is_closed()
    if not closed:
        return {k: _resolve(v) for k, v in exports.items()}
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return {k: _resolve(v) for k, v in exports.items()}
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def _resolve(value: object) -> Any:
    """An exported value, with Outputs resolved; a secret Output becomes a ``Secret``, one
    known only at `pulumi up` (a run as preview) :data:`UNKNOWN_MARKER`."""
    if isinstance(value, pulumi.Output):
        if not pulumi_sdk.sync_await(value.is_known()):
            return UNKNOWN_MARKER
        is_secret = pulumi_sdk.sync_await(value.is_secret())
        inner = _resolve(pulumi_sdk.sync_await(value.future()))
        return Secret(inner) if is_secret else inner
    if isinstance(value, dict):
        # dict.items, not value.items: pulumi's output types are dicts whose fields may be
        # named `items` (a configMap volume's), shadowing the method.
        return {k: _resolve(v) for k, v in dict.items(value)}
    if isinstance(value, Mapping):
        return {k: _resolve(value[k]) for k in value}
    if isinstance(value, (list, tuple)):
        return [_resolve(v) for v in value]
    return value


def close_event_loop() -> None:
    """Close this thread's event loop, for a command about to exit after a run."""
    with contextlib.suppress(RuntimeError):
        loop = asyncio.get_event_loop()
        if not loop.is_running():
            loop.close()
    asyncio.set_event_loop(None)
