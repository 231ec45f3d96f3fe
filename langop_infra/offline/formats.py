"""Marks that ``render`` writes and ``diff`` reads, importable without Pulumi."""

REDACTED = "[secret]"  # equal to mock_engine.REDACTED (a test keeps them equal)
OUT_MARKER = ".langop-render"  # the file that makes a folder a render (render --out)
