"""What every layer shares and nothing of the domain: the problem type behind every error
(``problems``) and where the user's code built a component (``construction``), shared text
(``text``: one "did you mean", one-line folding), the bounded YAML loader and dumper,
redaction of secret values, process tuning for long program runs, and keeping stdout clean
while one runs. Imports nothing of the package but the error root (``langop_infra._errors``)."""
