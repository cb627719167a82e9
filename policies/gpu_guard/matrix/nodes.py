"""Kubernetes and nodes: kubelet skew, EKS version lifecycle, node images and the drivers they bake in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from ..versions import KubeMinor, parse_kube_minor
from .cuda import CudaQueries
from .findings import (
    OS_NAMES,
    Finding,
    OsName,
    pick,
)
from .results import NodeImage
from .rows import BakedDriver, NodeImageRow

# Where no Kubernetes version qualifies: what is true, and what to change first (issue 46: "Upgrade to none ...").
_NONE_FITS = (
    "no EKS version in standard support takes this pool as it is (its node image or GPU Operator release lists "
    "none of them); change the node OS, image release or operator release first, then the Kubernetes version"
)
_NONE_FITS_START = _NONE_FITS[0].upper() + _NONE_FITS[1:]


class NodeQueries(CudaQueries):
    """Queries about Kubernetes versions, EKS support and node images."""

    # ---------------------------------------------------------------- Kubernetes / EKS / node images
    def kubelet_skew(self, control_plane: str, kubelet: str) -> list[Finding]:
        """Kubelet not newer than the control plane and at most `max_minors_older` minors older."""
        rule = "kubelet-version-skew"
        plane = parse_kube_minor(control_plane)
        node = parse_kube_minor(kubelet)
        behind = node.minors_behind(plane)
        limit = self._skew.max_minors_older
        oldest = KubeMinor(plane.major, plane.minor - limit)
        allowed = tuple(str(KubeMinor(plane.major, plane.minor - i)) for i in range(limit + 1))
        if behind < 0 and not self._skew.newer_allowed:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kubelet {node} is newer than the control plane {plane}; a kubelet must not be newer than "
                    f"kube-apiserver. Use kubelet {plane} (or {oldest}-{plane}), or upgrade the control plane first.",
                    self._skew.source,
                    allowed,
                )
            ]
        if behind > limit:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kubelet {node} is {behind} minor versions older than the control plane {plane}; at most "
                    f"{limit} are allowed. Use kubelet {oldest}-{plane}.",
                    self._skew.source,
                    allowed,
                )
            ]
        return [
            Finding(
                "ok", rule, f"kubelet {node} under control plane {plane} is within the skew policy", self._skew.source
            )
        ]

    def eks_lifecycle(
        self, kubernetes: str, today: date, *, fits: Callable[[str], bool] | None = None
    ) -> list[Finding]:
        """Standard support (ok), extended support (advisory) or past extended support (mandatory).

        `fits`: whether a version suits the pool (its node image is published, its operator supports it); the
        suggestions are only versions in standard support that fit."""
        rule = "kubernetes-version-lifecycle"
        wanted = parse_kube_minor(kubernetes)
        row = self._eks.get(str(wanted))
        standard = [r.version for r in self.data.eks_versions if r.end_standard is None or today <= r.end_standard]
        # A version is offered from its release day, or from `available_by` while the release day is unknown.
        standard = [v for v in standard if (on := self._eks[v].released or self._eks[v].available_by) is None
                    or on <= today]
        choices = tuple(v for v in reversed(standard) if fits is None or fits(v))
        pending = next((p for p in self.data.eks_pending if p.version == str(wanted)), None)
        if row is None and pending is not None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"Kubernetes {wanted} (released upstream {pending.upstream_released.isoformat()}) is not an "
                    f"Amazon EKS version yet; {pick(choices, 'choose one of', _NONE_FITS)}",
                    pending.source,
                    choices,
                )
            ]
        if row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"Kubernetes {wanted} is not an Amazon EKS version in the matrix; "
                    f"{pick(choices, 'choose one of', _NONE_FITS)}",
                    self.data.eks_versions[-1].source,
                    choices,
                )
            ]
        caveat = "" if row.confirmed else " (support dates unconfirmed)"
        released = row.released or row.available_by
        if released is not None and today < released:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"Kubernetes {wanted} is not yet released on Amazon EKS (release {released.isoformat()}); "
                    f"{pick(choices, 'choose one of', _NONE_FITS)}",
                    row.source,
                    choices,
                )
            ]
        if row.end_standard is None or today <= row.end_standard:
            until = f" until {row.end_standard.isoformat()}" if row.end_standard else ""
            return [Finding("ok", rule, f"EKS {wanted} is in standard support{until}{caveat}", row.source)]
        if row.end_extended is not None and today <= row.end_extended:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"EKS {wanted} left standard support on {row.end_standard.isoformat()} and is in extended support "
                    f"(extra cost) until {row.end_extended.isoformat()}{caveat}. "
                    f"{pick(choices, 'Upgrade to', _NONE_FITS_START)}",
                    row.source,
                    choices,
                )
            ]
        ended = row.end_extended.isoformat() if row.end_extended else "an unrecorded date"
        return [
            Finding(
                "mandatory",
                rule,
                f"EKS {wanted} is not supported: extended support ended on {ended}{caveat}; EKS auto-upgrades such "
                f"control planes. {pick(choices, 'Use', _NONE_FITS_START)}",
                row.source,
                choices,
            )
        ]

    def _node_image_row(self, os: str) -> NodeImageRow | None:
        return next((row for row in self.data.node_images if row.os == os), None)

    def node_image(
        self, os: OsName, kubernetes: str, arch: str = "x86_64", today: date | None = None
    ) -> NodeImage | None:
        """The node image SSM parameter for an OS, EKS version and CPU arch; None for an unknown OS/arch."""
        row = self._node_image_row(os)
        if row is None or arch not in row.arch_names:
            return None
        minor = str(parse_kube_minor(kubernetes))
        baked = self._baked_branch(row, today or date.today(), minor)
        return NodeImage(
            os=os,
            kubernetes=minor,
            arch=arch,
            ssm_parameter=row.ssm_parameter.format(kubernetes=minor, arch=row.arch_names[arch]),
            published=minor in row.published,
            published_versions=row.published,
            driver_branch=baked,
            source=row.source,
        )

    @staticmethod
    def _baked_row(row: NodeImageRow, today: date, kubernetes: str | None = None) -> BakedDriver | None:
        """The baked-driver step in force on `today` for that EKS version (any version's newest step when None)."""
        current = [
            b
            for b in row.baked_driver
            if b.since <= today and (kubernetes is None or not b.kubernetes or kubernetes in b.kubernetes)
        ]
        return max(current, key=lambda b: b.since) if current else None

    @classmethod
    def _baked_branch(cls, row: NodeImageRow, today: date, kubernetes: str | None = None) -> int | None:
        step = cls._baked_row(row, today, kubernetes)
        return step.branch if step else None

    def node_image_findings(
        self,
        os: OsName,
        kubernetes: str,
        arch: str = "x86_64",
        today: date | None = None,
        control_plane: str | None = None,
    ) -> list[Finding]:
        """Is a node image published for this OS and kubelet version? (rule node-image-published)

        The kubelet suggested instead is a published one the skew policy allows under `control_plane` (when given):
        a suggestion that itself fails kubelet-version-skew is no fix (Ubuntu 26.04 images start at EKS 1.35, so
        under a 1.34 control plane no 26.04 kubelet fits and only another OS or a control plane upgrade does)."""
        rule = "node-image-published"
        image = self.node_image(os, kubernetes, arch, today)
        row = self._node_image_row(os)
        if image is None or row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"no node image is recorded for OS {os} on {arch}; use one of {', '.join(OS_NAMES)}.",
                    self.data.node_images[0].source,
                    OS_NAMES,
                )
            ]
        if image.published and image.kubernetes in row.published_unconfirmed:
            confirmed = ", ".join(v for v in row.published if v not in row.published_unconfirmed) or "none"
            return [Finding("advisory", rule,
                            f"{image.ssm_parameter} is UNCONFIRMED: no primary source read shows the {os} EKS node "
                            f"image for Kubernetes {image.kubernetes} (a secondary listing names it; confirmed: "
                            f"{confirmed}). Check the SSM parameter in your account before relying on it.",
                            image.source)]
        if image.published:
            return [Finding("ok", rule, f"{image.ssm_parameter} is published", image.source)]
        alternatives = [
            f"{other.os} ({image.kubernetes})"
            for other in self.data.node_images
            if other.os != os and image.kubernetes in other.published
        ]
        fitting = [v for v in row.published if control_plane is None or self._within_skew(control_plane, v)]
        if fitting:
            instead = f"Use kubelet {fitting[-1]} within the skew policy"
        else:
            newer = [v for v in row.published if parse_kube_minor(v) > parse_kube_minor(control_plane or v)]
            instead = (
                f"No published {os} kubelet fits a {control_plane} control plane (a kubelet is never newer than the "
                f"control plane): upgrade the control plane to {newer[0]}, or use"
                if newer
                else f"No published {os} kubelet fits a {control_plane} control plane: use"
            )
        return [
            Finding(
                "mandatory",
                rule,
                f"no {os} EKS node image is published for Kubernetes {image.kubernetes} ({image.ssm_parameter} does "
                f"not exist; published: {', '.join(row.published)}). {instead}{', or' if fitting else ''} "
                f"{', '.join(alternatives) or 'another OS'}.",
                image.source,
                (*fitting[-1:], *alternatives),
            )
        ]

    def _within_skew(self, control_plane: str, kubelet: str) -> bool:
        """Whether kubelet-version-skew passes for this kubelet under this control plane."""
        return all(f.level == "ok" for f in self.kubelet_skew(control_plane, kubelet))
