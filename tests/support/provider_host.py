"""Drive a dynamic provider the way the Pulumi engine does, through the SDK's own host.

``pulumi up`` runs a dynamic provider in ``python -m pulumi.dynamic``, whose gRPC servicer
(:class:`DynamicResourceProviderServicer`) deserializes the provider from ``__provider`` and
calls it. :class:`EngineHost` calls that same servicer in-process with the requests the
engine builds (``pkg/resource/plugin/provider_plugin.go``), and keeps the state between steps:

- properties travel as protobuf ``Struct``s, with the dill+base64 provider under
  ``__provider`` (made by the SDK's own ``serialize_provider``, a secret as the SDK marks it);
- the servicer's ``Configure`` answer decides secrets: it does not accept them, so the engine
  sends plain values and re-marks outputs secret where the same-named input was
  (``annotateSecrets``). ``wrap_secrets=True`` sends them wrapped in the secret signature
  instead, as for a provider that accepts secrets, except ``__provider``: the servicer's
  ``get_provider`` cannot take a wrapped one (``TypeError: unhashable type: 'dict'``);
- outputs the registration lists in ``additionalSecretOutputs`` (``secret_outputs``) are
  made secret by the engine after each step, as the engine does for any provider;
- preview sends unknowns as the unknown sentinel and never calls ``Create``/``Update`` (the
  dynamic provider does not support provider previews);
- ``diff``, ``update`` and ``read`` get the previous *outputs*, ``read`` also the inputs.

Not real here: the gRPC transport (the servicer is called directly) and its
``ServicerContext`` (:class:`_Context` records an abort as :class:`ProviderFailure`, whose
text is the traceback the engine would print).
"""

from __future__ import annotations

import ast
import contextvars
import importlib.util
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.dynamic import ResourceProvider
from pulumi.dynamic.dynamic import serialize_provider
from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2

from tests.support.source import parse_source

PROVIDER_KEY = "__provider"
SECRET_SIG = rpc._special_secret_sig
SIG_KEY = rpc._special_sig_key
UNKNOWN = rpc.UNKNOWN
URN = "urn:pulumi:test::project::pulumi-python:dynamic:Resource::sync"


def load_servicer_module() -> types.ModuleType:
    """``pulumi.dynamic.__main__`` without starting its server.

    Importing the module runs ``main()`` at its bottom, which serves gRPC forever. Its source
    is parsed instead, every top-level ``main()`` call dropped, and the rest executed in a
    fresh module: robust to formatting changes (the AST, not text, is edited), it runs the
    SDK's own class definitions unchanged, and if the call ever moves under
    ``if __name__ == "__main__":`` the module still loads (that guard is false here).
    """
    spec = importlib.util.find_spec("pulumi.dynamic.__main__")
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as source:
        tree = parse_source(source.read(), spec.origin)

    def runs_main(node: ast.stmt) -> bool:
        return (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "main"
        )

    tree.body = [node for node in tree.body if not runs_main(node)]
    module = types.ModuleType("pulumi_dynamic_host_under_test")
    module.__file__ = spec.origin
    exec(compile(tree, spec.origin, "exec"), module.__dict__)
    return module


class ProviderFailure(Exception):
    """The servicer aborted the call: the engine reports ``details`` and fails the step."""

    def __init__(self, code: Any, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _Context:
    """Stand-in for ``grpc.ServicerContext`` (no gRPC server runs in-process)."""

    def abort(self, code: Any, details: str) -> None:
        raise ProviderFailure(code, details)

    def set_code(self, code: Any) -> None:
        pass

    def set_details(self, details: str) -> None:
        pass


@dataclass(frozen=True)
class Secret:
    """An engine property value with its secret bit set."""

    value: Any


class Computed:
    """A preview-time unknown (an input whose value comes from a resource not yet created)."""


COMPUTED = Computed()


def contains_secrets(value: Any) -> bool:
    if isinstance(value, Secret):
        return True
    if isinstance(value, Mapping):
        return any(contains_secrets(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_secrets(v) for v in value)
    return False


def annotate_secrets(outs: dict[str, Any], ins: Mapping[str, Any]) -> None:
    """The engine's ``annotateSecrets``: an output is secret where its same-named input was."""
    for key, in_value in ins.items():
        if key not in outs:
            continue
        out_value = outs[key]
        if isinstance(out_value, dict) and isinstance(in_value, Mapping):
            annotate_secrets(out_value, in_value)
        elif not isinstance(out_value, Secret) and contains_secrets(in_value):
            outs[key] = Secret(out_value)


def to_wire(value: Any, *, keep_secrets: bool, keep_unknowns: bool) -> Any:
    """An engine value as the JSON-like value put into the request's ``Struct``."""
    if isinstance(value, Secret):
        inner = to_wire(value.value, keep_secrets=keep_secrets, keep_unknowns=keep_unknowns)
        return {SIG_KEY: SECRET_SIG, "value": inner} if keep_secrets else inner
    if isinstance(value, Computed):
        if not keep_unknowns:
            raise AssertionError("an unknown reached a step that needs known values")
        return UNKNOWN
    if isinstance(value, Mapping):
        return {
            str(k): to_wire(v, keep_secrets=keep_secrets, keep_unknowns=keep_unknowns)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [to_wire(v, keep_secrets=keep_secrets, keep_unknowns=keep_unknowns) for v in value]
    return value


def to_struct(props: Mapping[str, Any], **options: bool) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    # The engine leaves out null properties rather than sending them as null.
    struct.update({k: to_wire(v, **options) for k, v in props.items() if v is not None})
    return struct


def from_wire(value: Any) -> Any:
    """A response value as the engine keeps it (``KeepSecrets: true``)."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return Secret(from_wire(value.get("value")))
        if value.get(SIG_KEY):
            raise AssertionError(f"unexpected signature in a provider response: {value}")
        return {k: from_wire(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    if value == UNKNOWN:
        return COMPUTED
    if isinstance(value, float) and value.is_integer():
        return int(value)  # Struct numbers are doubles; ints read better in assertions
    return value


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    return from_wire(json_format.MessageToDict(struct))


def reveal(value: Any) -> Any:
    """``value`` with every secret opened (what the provider and the state hold)."""
    if isinstance(value, Secret):
        return reveal(value.value)
    if isinstance(value, Mapping):
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    return value


def shown(value: Any) -> Any:
    """``value`` as previews, ``pulumi stack output`` and the state file's plaintext show it."""
    if isinstance(value, Secret):
        return "[secret]"
    if isinstance(value, Mapping):
        return {k: shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v) for v in value]
    return value


@dataclass
class Preview:
    """What ``pulumi preview`` shows for the resource."""

    op: str  # create | update | same
    failures: list[tuple[str, str]]
    checked: dict[str, Any]


@dataclass
class EngineHost:
    """One dynamic resource's lifecycle through the SDK's servicer, with its state."""

    provider: ResourceProvider
    wrap_secrets: bool | None = None  # None: as the servicer's Configure answer says
    id: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    # The registration's additionalSecretOutputs: the engine marks these outputs secret.
    secret_outputs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.module = load_servicer_module()
        self.servicer = self.module.DynamicResourceProviderServicer()
        self.serialized = serialize_provider(self.provider)
        configured = self._call("Configure", provider_pb2.ConfigureRequest(args=to_struct({})))
        self.accept_secrets = bool(configured.acceptSecrets)
        if self.wrap_secrets is None:
            self.wrap_secrets = self.accept_secrets

    # -- the engine's steps ---------------------------------------------------------------

    def preview(self, program_inputs: Mapping[str, Any]) -> Preview:
        """Check, then Diff against the state; the provider never creates in a preview."""
        news = self._news(program_inputs)
        checked, failures = self._check(news, preview=True)
        if failures or not self.id:
            return Preview("create", failures, checked)
        changes = self._diff(checked, preview=True)
        return Preview("update" if changes else "same", failures, checked)

    def up(self, program_inputs: Mapping[str, Any]) -> str:
        """Check, then Create or Diff + Update; the step taken. Raises ProviderFailure."""
        news = self._news(program_inputs)
        checked, failures = self._check(news, preview=False)
        if failures:
            raise ProviderFailure("check", "; ".join(f"{k}: {r}" for k, r in failures))
        if not self.id:
            reply = self._call(
                "Create", provider_pb2.CreateRequest(urn=URN, properties=self._send(checked))
            )
            outs = from_struct(reply.properties)
            self._record(reply.id, checked, outs, checked)
            return "create"
        if not self._diff(checked, preview=False):
            self.inputs = checked
            return "same"
        reply = self._call(
            "Update",
            provider_pb2.UpdateRequest(
                id=self.id,
                urn=URN,
                olds=self._send(self.outputs),
                news=self._send(checked),
                old_inputs=self._send(self.inputs),
            ),
        )
        self._record(self.id, checked, from_struct(reply.properties), checked)
        return "update"

    def refresh(self) -> dict[str, Any]:
        """Read with the previous outputs (and inputs); the new outputs replace the state."""
        reply = self._call(
            "Read",
            provider_pb2.ReadRequest(
                id=self.id,
                urn=URN,
                properties=self._send(self.outputs),
                inputs=self._send(self.inputs),
            ),
        )
        self._record(reply.id, self.inputs, from_struct(reply.properties), self.outputs)
        return self.outputs

    def destroy(self) -> None:
        self._call(
            "Delete",
            provider_pb2.DeleteRequest(
                id=self.id,
                urn=URN,
                properties=self._send(self.outputs),
                old_inputs=self._send(self.inputs),
            ),
        )
        self.id, self.inputs, self.outputs = "", {}, {}

    # -- views ----------------------------------------------------------------------------

    def state_text(self) -> str:
        """The state as a backend stores it, secrets as ciphertext stand-ins."""
        return json.dumps(
            {"id": self.id, "inputs": shown(self.inputs), "outputs": shown(self.outputs)}
        )

    def plain_outputs(self) -> dict[str, Any]:
        return {k: v for k, v in reveal(self.outputs).items() if k != PROVIDER_KEY}

    # -- plumbing -------------------------------------------------------------------------

    def _news(self, program_inputs: Mapping[str, Any]) -> dict[str, Any]:
        # The SDK registers the serialized provider as a secret (serialize_as_secret_always).
        return {**program_inputs, PROVIDER_KEY: Secret(self.serialized)}

    def _check(self, news: dict[str, Any], *, preview: bool) -> tuple[dict, list]:
        reply = self._call(
            "Check",
            provider_pb2.CheckRequest(
                urn=URN,
                olds=self._send(self.inputs, unknowns=preview),
                news=self._send(news, unknowns=preview),
            ),
        )
        checked = from_struct(reply.inputs)
        annotate_secrets(checked, news)
        return checked, [(f.property, f.reason) for f in reply.failures]

    def _diff(self, checked: dict[str, Any], *, preview: bool) -> bool:
        reply = self._call(
            "Diff",
            provider_pb2.DiffRequest(
                id=self.id,
                urn=URN,
                olds=self._send(self.outputs, unknowns=preview),
                news=self._send(checked, unknowns=preview),
                old_inputs=self._send(self.inputs, unknowns=preview),
            ),
        )
        return reply.changes == provider_pb2.DiffResponse.DIFF_SOME

    def _record(self, id_: str, inputs: dict, outs: dict, secrets_from: Mapping) -> None:
        annotate_secrets(outs, secrets_from)
        for name in self.secret_outputs:
            if name in outs and not isinstance(outs[name], Secret):
                outs[name] = Secret(outs[name])
        self.id, self.inputs, self.outputs = id_, inputs, outs

    def _send(self, props: Mapping[str, Any], unknowns: bool = False) -> struct_pb2.Struct:
        struct = to_struct(props, keep_secrets=bool(self.wrap_secrets), keep_unknowns=unknowns)
        if PROVIDER_KEY in props:
            struct[PROVIDER_KEY] = reveal(props[PROVIDER_KEY])
        return struct

    def _call(self, method: str, request: Any) -> Any:
        self.calls.append(method)
        # get_provider() configures the SDK's ambient settings; a copied context keeps that
        # from leaking into other tests, as the separate provider process does for real.
        context = contextvars.copy_context()
        return context.run(getattr(self.servicer, method), request, _Context())


def service_inputs(endpoint: str, **extra: Any) -> dict[str, Any]:
    """The inputs LanguageTool registers for a service tool ``memory`` in ``apps``, as engine
    values, reached directly at ``endpoint``."""
    return {
        "endpoint": endpoint,
        "mcp_path": "/mcp",
        "access": "direct",
        "namespace": "apps",
        "service": "memory",
        "port": 8080,
        "timeout": 5,
        "required": False,
        **extra,
    }
