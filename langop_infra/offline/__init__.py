"""Offline tooling beside the product: the mock engine, ``render`` and ``diff``.

Nothing here is imported by the components; it runs a stack program under the Pulumi SDK's
mocks and works on what that program registered.
"""
