"""Helpers for users' own tests: a NetworkPolicy reachability evaluator and secret canaries.

``from langop_infra.testing import reachability`` — may pod A reach pod B on port P, given the
NetworkPolicies a render produced.
"""
