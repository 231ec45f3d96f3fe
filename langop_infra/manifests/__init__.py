"""Pure builders: from validated specs to plain dicts. Names, labels, endpoints, env vars,
``config.yaml``, pod specs, NetworkPolicies and the LiteLLM gateway's config.

Nothing here registers a resource; every function is tested by a plain call.
"""
