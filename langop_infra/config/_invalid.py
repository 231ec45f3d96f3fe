"""The one way a config validator says no: a pydantic error with a ``langop_<kind>`` slug."""

from __future__ import annotations

from typing import cast

from pydantic_core import PydanticCustomError
from typing_extensions import LiteralString


def invalid(kind: str, message: str) -> PydanticCustomError:
    """A validation error with a type slug (``langop_<kind>``) and a message that says what to
    do; pydantic reports it as given, without a "Value error" preamble."""
    # pydantic types both as LiteralString (a guard against formatting user text); these are
    # the package's own words, and no context is given, so nothing is formatted into them.
    return PydanticCustomError(cast(LiteralString, f"langop_{kind}"), cast(LiteralString, message))
