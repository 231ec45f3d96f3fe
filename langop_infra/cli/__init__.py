"""The ``langop-infra`` command: ``main`` parses the command line, and each subcommand lives
in a module of its own, imported only when it runs."""

from langop_infra.cli.main import main

__all__ = ["main"]
