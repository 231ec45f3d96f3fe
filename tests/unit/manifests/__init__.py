"""Unit tests that mirror the package: tests/unit/<layer>/test_<module>.py."""
