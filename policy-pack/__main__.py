"""Entry point of the langop-infra policy pack (see PulumiPolicy.yaml)."""

from langop_infra.policy.pack import serve

serve()
