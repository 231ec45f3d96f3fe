"""The CrossGuard policy pack: a platform team's rules for agents and MCP tools (egress,
literal credentials, pinned images, the restricted Pod Security Standard, complete
NetworkPolicies, schema sync), enforced by ``pulumi preview --policy-pack`` and, offline, by
``langop-infra check``. Rules are pure functions in ``rules``; ``pack`` wraps them for
pulumi-policy."""
