"""LanguageMemory: an agent's long-term memory. ``managed`` runs a memory MCP server
(language-operator's ``remember``/``recall``) as a LanguageTool with a persistent volume;
``external`` records where one runs (Ark's Memory). Agents name it in ``memory: {name}``."""

from typing import Any

import pulumi
from pydantic import ValidationError
from typing_extensions import Unpack

from langop_infra.components._k8s import (
    aliased,
    child_options,
    component_error,
    register_component,
    type_token,
)
from langop_infra.components.args import LanguageMemoryArgs
from langop_infra.components.tool import LanguageTool
from langop_infra.config._managed_memory import managed_tool
from langop_infra.config._memory import MemorySpec
from langop_infra.config._pydantic_errors import problems_from
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract


def parse_memory(name: str, args: Any, fields: dict[str, Any]) -> MemorySpec:
    """The memory's spec from ``args`` (a mapping or a MemorySpec) and keyword fields."""
    if isinstance(args, MemorySpec) and not fields:
        return args
    data = args.model_dump() if isinstance(args, MemorySpec) else dict(args or {})
    data.update(fields)
    data.setdefault("name", name)
    with component_error(f"LanguageMemory {data.get('name')!r}"):
        if isinstance(data.get("namespace"), pulumi.Output):
            why = (
                "must be known when the program runs, not an Output: agents find a "
                "LanguageMemory by its namespace when they are built; pass the name as a string"
            )
            raise SpecError([Problem("namespace", why)])
        try:
            return MemorySpec.model_validate(data)
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
        spec = parse_memory(name, args, dict(kwargs))
        namespace = spec.namespace or contract.DEFAULT_NAMESPACE
        register_component(self, "LanguageMemory", namespace, spec.name)
        super().__init__(type_token("LanguageMemory"), name, None, aliased(opts, "LanguageMemory"))
        self.spec = spec.model_copy(update={"namespace": namespace})
        self.tool: LanguageTool | None = None
        if spec.type == "managed":
            self.tool = LanguageTool(
                f"{name}-server", managed_tool(spec, namespace), opts=child_options(self, opts)
            )
            endpoint: Any = self.tool.target.endpoint
        else:
            address = spec.address
            endpoint = address.value if address is not None and address.value else ""
        self.endpoint = pulumi.Output.from_input(endpoint)
        self.register_outputs({"endpoint": self.endpoint})
