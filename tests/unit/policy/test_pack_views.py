"""The rules' view of the engine's resources (langop_infra.policy.pack.resources): made from
the resources each policy is handed, or, in ``langop-infra check``, once for every policy."""

from __future__ import annotations

from pulumi_policy import StackValidationArgs
from pulumi_policy.policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions

from langop_infra.policy._rules import Resource
from langop_infra.policy.pack import ViewedArgs, resources


def _resource(name: str, props: dict[str, object]) -> PolicyResource:
    options = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
    urn = f"urn:pulumi:dev::p::kubernetes:core/v1:ConfigMap::{name}"
    return PolicyResource(
        "kubernetes:core/v1:ConfigMap", props, urn, name, options, None, None, [], {}
    )


def test_a_policys_resources_are_viewed_from_what_it_is_handed() -> None:
    first, second = _resource("a", {"data": {"k": "v"}}), _resource("b", {})
    second.dependencies = [first]
    views = resources(StackValidationArgs([first, second], None))
    assert views == [
        Resource("kubernetes:core/v1:ConfigMap", first.urn, "a", {"data": {"k": "v"}}, ()),
        Resource("kubernetes:core/v1:ConfigMap", second.urn, "b", {}, (first.urn,)),
    ]
    assert views[0].kind == "ConfigMap"


def test_views_made_once_are_handed_to_every_policy() -> None:
    found = [_resource("a", {})]
    views = resources(StackValidationArgs(found, None))
    args = ViewedArgs(views, found, {"level": 1})
    assert resources(args) is views
    assert (args.resources, args.get_config()) == (found, {"level": 1})
