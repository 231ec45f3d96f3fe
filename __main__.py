"""Pulumi entry point: ``pulumi up -s <env>`` (and ``langop-infra render``) run this file."""

from langop_infra.program.stack import main

main()
