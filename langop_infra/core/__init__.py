"""What every layer shares and nothing of the domain: the problem type behind every error,
the bounded YAML loader and dumper, redaction of secret values, process tuning for long
program runs, and keeping stdout clean while one runs. Imports nothing else of the package."""
