"""Every runtime dependency is bounded above, and what is installed falls inside the ranges
(pulumi's own requirements included: its ``dill`` and ``pyyaml`` must fit ours)."""

from __future__ import annotations

from importlib.metadata import requires, version

from packaging.requirements import Requirement


def runtime_requirements() -> list[Requirement]:
    """pyproject's ``dependencies``, as the installed package's metadata records them
    (extras carry a marker and are left out)."""
    found = [Requirement(text) for text in requires("langop-infra") or []]
    return [r for r in found if r.marker is None]


def test_every_runtime_dependency_has_an_upper_bound() -> None:
    unbounded = [
        str(r)
        for r in runtime_requirements()
        if not any(s.operator in ("<", "<=", "~=", "==") for s in r.specifier)
    ]
    assert unbounded == []


def test_the_installed_versions_fit_our_ranges_and_pulumis() -> None:
    ours = {r.name: r for r in runtime_requirements()}
    assert [n for n, r in ours.items() if version(n) not in r.specifier] == []
    # Where pulumi pins a package we also pin, the installed one satisfies both.
    for text in requires("pulumi") or []:
        theirs = Requirement(text)
        if theirs.name in ours and theirs.marker is None:
            assert version(theirs.name) in theirs.specifier, (theirs, ours[theirs.name])


def test_cryptography_is_a_runtime_dependency() -> None:
    """The passphrase checks of `secure:` values run on a plain install (issue 35 §2)."""
    assert "cryptography" in {r.name for r in runtime_requirements()}
