"""AgentLab's tool base classes: a tool is a name, a description, a pydantic input model, an
optional output model and an ``async execute(**kwargs)`` that returns a dict.

An AgentLab tool ports unchanged: it may declare its models as ``input_schema`` /
``output_schema`` (AgentLab's listing) or as ``input_model`` / ``output_model``; either pair
works, and both names answer. Errors go in the result (``{"success": False, "error": ...}``),
which :func:`langop_infra.toolkit.serve` turns into an MCP error result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["MCPToolBase", "MCPToolInput", "MCPToolOutput"]


class MCPToolInput(BaseModel):
    """Base of a tool's input model: unknown arguments are refused (a misspelt argument is an
    error the LLM can correct, not an argument silently dropped)."""

    model_config = ConfigDict(extra="forbid")


class MCPToolOutput(BaseModel):
    """Base of a tool's output model (optional): extra keys are kept (AgentLab's ``warning``)."""

    model_config = ConfigDict(extra="allow")


class MCPToolBase(ABC):
    """A tool: subclass it, give ``name``, ``description``, an input model and ``execute``."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The tool's name (verb-based: ``get_current_datetime``)."""

    @property
    @abstractmethod
    def description(self) -> str:
        """What the tool does and when to use it (the LLM reads it)."""

    @property
    def input_schema(self) -> type[MCPToolInput]:
        """The input model (AgentLab's name); same as :attr:`input_model`."""
        return self._declared("input_model", "input_schema")

    @property
    def input_model(self) -> type[MCPToolInput]:
        """The input model; same as :attr:`input_schema`."""
        return self._declared("input_schema", "input_model")

    @property
    def output_schema(self) -> type[BaseModel] | None:
        """The output model, if any (AgentLab's name); same as :attr:`output_model`."""
        return self._declared_output("output_model")

    @property
    def output_model(self) -> type[BaseModel] | None:
        """The output model, if any; same as :attr:`output_schema`."""
        return self._declared_output("output_schema")

    @abstractmethod
    async def execute(self, **kwargs: object) -> dict[str, Any]:
        """Run the tool; return a dict (``success``, the result, ``error``)."""

    async def execute_with_validation(self, **kwargs: object) -> dict[str, Any]:
        """Validate ``kwargs`` against the input model, run :meth:`execute` on the validated
        values, and check the result against the output model when there is one.

        Raises ``ValueError("Input validation failed: ...")`` for bad arguments and
        ``ValueError("Output validation failed: ...")`` for a result its model refuses.
        """
        try:
            inputs = self.input_model.model_validate(kwargs)
        except ValidationError as exc:
            raise ValueError(f"Input validation failed: {_problems(exc)}") from None
        result = await self.execute(**inputs.model_dump())
        output = self.output_model
        if output is not None:
            try:
                output.model_validate(result)
            except ValidationError as exc:
                raise ValueError(f"Output validation failed: {_problems(exc)}") from None
        return result

    def get_metadata(self) -> dict[str, Any]:
        """``name``, ``description``, ``input_schema`` and ``output_schema`` (JSON Schemas;
        ``output_schema`` is None without an output model): AgentLab's ``/mpc/tools`` entry."""
        output = self.output_model
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_model.model_json_schema(),
            "output_schema": None if output is None else output.model_json_schema(),
        }

    def _declared(self, other: str, asked: str) -> type[MCPToolInput]:
        if getattr(type(self), other) is not getattr(MCPToolBase, other):
            model: type[MCPToolInput] = getattr(self, other)
            return model
        raise NotImplementedError(
            f"{type(self).__name__} declares no input model: define the property "
            f"input_schema (or input_model) returning an MCPToolInput subclass (asked: {asked})"
        )

    def _declared_output(self, other: str) -> type[BaseModel] | None:
        if getattr(type(self), other) is not getattr(MCPToolBase, other):
            model: type[BaseModel] | None = getattr(self, other)
            return model
        return None


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in error['loc']) or '(arguments)'}: {error['msg']}"
        for error in exc.errors()
    )
