"""Helpers for users' own tests: a NetworkPolicy reachability evaluator and secret canaries.

- ``langop_infra.testing.reachability``: may pod A reach pod B on port P, given the
  NetworkPolicies a render produced.
- ``langop_infra.testing.secrets``: the values a program registered as secrets.
"""
