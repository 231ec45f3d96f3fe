"""Marks that ``render`` writes and ``diff`` reads, importable without Pulumi."""

from langop_infra._errors import REDACTED  # the package's one redaction mark

OUT_MARKER = ".langop-render"  # the file that makes a folder a render (render --out)

__all__ = ["OUT_MARKER", "REDACTED"]
