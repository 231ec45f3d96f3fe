"""LanguageMemory: an agent's long-term memory. ``managed`` runs a memory MCP server
(language-operator's ``remember``/``recall``) as a LanguageTool with a persistent volume;
``external`` records where one runs (Ark's Memory). Agents name it in ``memory: {name}``."""

from typing import TYPE_CHECKING, Any

import pulumi
from pydantic import ValidationError
from typing_extensions import Unpack

from langop_infra.components import _in_cluster as in_cluster, _namespace as namespaces
from langop_infra.components._k8s import aliased, child_options, component_error, type_token
from langop_infra.components.args import LanguageMemoryArgs, MemoryRefArgs
from langop_infra.components.tool import LanguageTool
from langop_infra.config._managed_memory import managed_tool
from langop_infra.config._memory import MemorySpec
from langop_infra.config._pydantic_errors import problems_from
from langop_infra.core._construction import construction_site
from langop_infra.core.problems import SpecError
from langop_infra.manifests import _contract as contract


def parse_memory(name: str, args: Any, fields: dict[str, Any]) -> tuple[MemorySpec, Any]:
    """The memory's spec from ``args`` (a mapping or a MemorySpec) and keyword fields, and
    its namespace when that is an Output (the spec's is None then)."""
    if isinstance(args, MemorySpec) and not fields:
        return args, None
    data = args.model_dump() if isinstance(args, MemorySpec) else dict(args or {})
    data.update(fields)
    data.setdefault("name", name)
    late = data.pop("namespace") if isinstance(data.get("namespace"), pulumi.Output) else None
    with component_error(f"LanguageMemory {data.get('name')!r}"):
        try:
            return MemorySpec.model_validate(data), late
        except ValidationError as exc:
            raise SpecError(problems_from(exc, "", data)) from None


class LanguageMemory(pulumi.ComponentResource):
    """A memory agents use: its ``tool`` (a LanguageTool, managed) or nothing (external)."""

    endpoint: pulumi.Output[str]
    """The managed memory's MCP endpoint, or an external one's literal address ("" when it
    is kept in a Secret)."""

    def __init__(
        self,
        name: str,
        args: LanguageMemoryArgs = None,  # type: ignore[assignment]  # also a MemorySpec
        opts: pulumi.ResourceOptions | None = None,
        **kwargs: Unpack[LanguageMemoryArgs],
    ) -> None:
        spec, late = parse_memory(name, args, dict(kwargs))
        subject, site = f"LanguageMemory {spec.name!r}", construction_site()
        plain = None if late is not None else spec.namespace or contract.DEFAULT_NAMESPACE
        if spec.address is not None:
            with component_error(subject):
                in_cluster.refuse_unknown_services(
                    [("address.value", spec.address.value)], plain or ""
                )
        namespace: str | pulumi.Output[str] = plain or ""
        if late is not None:
            namespace = namespaces.checked_name(late, subject, site)
        place = namespaces.placement(name, namespace)
        namespaces.registered(self, "LanguageMemory", place, spec.name, site)
        super().__init__(type_token("LanguageMemory"), name, None, aliased(opts, "LanguageMemory"))
        # With a namespace Output, agents given this object take it to be in theirs, as they
        # take such a LanguageTool (checked when both resolve).
        self.namespace_known = late is None
        self.namespace = pulumi.Output.from_input(namespace)
        self.spec = spec.model_copy(update={"namespace": plain})
        self.tool: LanguageTool | None = None
        if spec.type == "managed":
            tool_spec = managed_tool(spec, plain)
            extra = {"namespace": namespace} if plain is None else {}
            self.tool = LanguageTool(
                f"{name}-server", tool_spec, opts=child_options(self, opts), **extra
            )
            endpoint: Any = self.tool.target.endpoint if plain else self.tool.endpoint
        else:
            address = spec.address
            endpoint = address.value if address is not None and address.value else ""
        self.endpoint = pulumi.Output.from_input(endpoint)
        self.register_outputs({"endpoint": self.endpoint})


if TYPE_CHECKING:
    # A LanguageMemory, or a reference to one.
    MemoryEntry = MemoryRefArgs | LanguageMemory
else:  # what Pulumi's analyzer reads: no Union in a package schema
    MemoryEntry = MemoryRefArgs
