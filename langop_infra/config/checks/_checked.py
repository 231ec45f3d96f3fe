"""A cluster document once validated: the value later layers take instead of asking whether
a spec was checked (no registry of checked objects, no flag on the spec).

:func:`~langop_infra.config.checks._validation.check_cluster` makes it; ``LanguageCluster``
takes it without a second check; :func:`deploy_warnings` gives, for the document and the
one ``LanguageCluster`` builds of it alike, every warning at the path the user wrote.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from langop_infra.config._managed_memory import user_path, with_managed_memories
from langop_infra.config.checks._advice import passthrough_warnings
from langop_infra.config.checks._egress_check import egress_findings
from langop_infra.config.checks._image_pins import unpinned_images
from langop_infra.config.checks._sync_path_check import sync_path_findings
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem


@dataclass(frozen=True)
class CheckedCluster:
    """A validated cluster document as the user wrote it, and the warnings of it that are
    still to be given, by path (unpinned images; none once the stack program has given them
    under their config keys: see :meth:`warned`)."""

    spec: ClusterSpec
    warnings: tuple[Problem, ...] = ()

    @classmethod
    def of(cls, spec: ClusterSpec) -> CheckedCluster:
        """``spec``, validated by the caller, with its unpinned images to warn of (none with
        ``requireImageDigests``: they were errors)."""
        required = spec.defaults.require_image_digests
        return cls(spec, () if required else tuple(unpinned_images(spec)))

    def warned(self) -> CheckedCluster:
        """The same document, its warnings given already."""
        return dataclasses.replace(self, warnings=())

    @property
    def deployed(self) -> ClusterSpec:
        """What is deployed: the document with each managed memory among its tools."""
        return with_managed_memories(self.spec)


def deploy_warnings(checked: CheckedCluster) -> list[Problem]:
    """What ``LanguageCluster`` warns of, in its order: egress and schema-sync paths its
    policies do not admit (unless ``strictEgress`` made them errors), models no gateway
    serves, then ``checked.warnings``. Found in what is deployed, named as written."""
    deployed = checked.deployed
    findings: list[Problem] = []
    if not deployed.defaults.strict_egress:
        findings += egress_findings(deployed) + sync_path_findings(deployed)
    findings += passthrough_warnings(deployed)
    named = [Problem(user_path(checked.spec, f.path), f.message, f.kind) for f in findings]
    return named + list(checked.warnings)
