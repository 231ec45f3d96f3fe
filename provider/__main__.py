"""Entry point of the langop-infra component plugin (see PulumiPlugin.yaml)."""

from langop_infra.program.package import serve

serve()
