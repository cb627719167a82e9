"""GPU Operator releases: the drivers and branches they list per OS, their Kubernetes ranges."""

from __future__ import annotations

from ..versions import parse_driver_version, parse_kube_minor
from .drivers import DriverQueries
from .findings import (
    BAKED_DRIVER_OS,
    NEAREST,
    Finding,
    OsName,
    fmt_versions,
)


class OperatorQueries(DriverQueries):
    """Queries about GPU Operator releases."""

    # ---------------------------------------------------------------- GPU Operator
    def unconfirmed_operator_note(self, version: str) -> str:
        """Why a release named second-hand is not in the matrix ('' when it is not such a release)."""
        row = next((r for r in self.data.operators_unconfirmed if r.version == version), None)
        return f" ({version} is unconfirmed: {row.note}; source {row.source})" if row is not None else ""

    def _unknown_operator(self, version: str) -> Finding:
        return Finding(
            "mandatory",
            "operator-known",
            f"GPU Operator {version} is not in the compatibility matrix{self.unconfirmed_operator_note(version)}; "
            "choose one of "
            f"{', '.join(reversed(self.operators()))}.",
            self.data.operators[-1].source,
            tuple(reversed(self.operators()))[:NEAREST],
        )

    def operator_branch_support(
        self, operator: str, os: OsName, driver: str, *, precompiled: bool = False
    ) -> list[Finding]:
        """Does this operator release support the driver's branch (and version) on this OS?"""
        rule = "driver-branch-supported"
        op = self.operator(operator)
        if op is None:
            return [self._unknown_operator(operator)]
        parsed = parse_driver_version(driver)
        if os in BAKED_DRIVER_OS:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"GPU Operator {op.version} does not list {os} as a supported OS; its node image ships driver "
                    f"R{parsed.branch} itself. Run the operator with driver.enabled=false and toolkit.enabled=false "
                    "(and devicePlugin disabled on Bottlerocket) for these nodes.",
                    op.source,
                )
            ]
        branches = op.branches.get(os)
        if not branches:
            supported_os = ", ".join(op.branches)
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"GPU Operator {op.version} does not support {os} (supported: {supported_os}); use one of those "
                    "or a newer operator release.",
                    op.source,
                    tuple(op.branches),
                )
            ]
        os_drivers = [d for d in op.drivers if parse_driver_version(d).branch in branches]
        if parsed.branch not in branches:
            extra = ""
            if parsed.branch == 535 and os == "ubuntu-24.04":
                extra = " NVIDIA never built R535 for Ubuntu 24.04; Ubuntu 24.04 needs R570/R580 or newer."
            elif any(parsed.branch in r.branches.get(os, ()) for r in self.data.operators):
                last = [r.version for r in self.data.operators if parsed.branch in r.branches.get(os, ())][-1]
                extra = f" The last release listing R{parsed.branch} on {os} is {last}."
            nearest = self._nearest_versions(parsed, os_drivers)
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"GPU Operator {op.version} does not support driver branch R{parsed.branch} (driver {driver}) "
                    f"on {os}; it supports {', '.join('R' + str(b) for b in branches)} there.{extra} "
                    f"Nearest supported drivers: {fmt_versions(nearest)}.",
                    op.source,
                    nearest,
                )
            ]
        if precompiled or parsed.is_branch_only:
            return [Finding("ok", rule, f"GPU Operator {op.version} supports R{parsed.branch} on {os}", op.source)]
        if parsed.text not in op.drivers:
            nearest = self._nearest_versions(parsed, os_drivers)
            return [
                Finding(
                    "advisory",
                    rule,
                    f"driver {driver} is in a supported branch (R{parsed.branch}) but not in GPU Operator "
                    f"{op.version}'s component matrix; NVIDIA tested: {fmt_versions(nearest)}.",
                    op.source,
                    nearest,
                )
            ]
        return [
            Finding(
                "ok", rule, f"GPU Operator {op.version} lists driver {driver} (R{parsed.branch}) for {os}", op.source
            )
        ]

    def operator_kubernetes(self, operator: str, kubernetes: str, os: OsName | None = None) -> list[Finding]:
        """Does this operator release support the Kubernetes version (on this OS, or on EKS when os is None)?"""
        rule = "operator-kubernetes-supported"
        op = self.operator(operator)
        if op is None:
            return [self._unknown_operator(operator)]
        wanted = parse_kube_minor(kubernetes)
        if os is not None and os in BAKED_DRIVER_OS:
            span = op.eks
            where = f"Amazon EKS (GPU Operator {op.version} lists no {os} nodes)"
        elif os is not None:
            if os not in op.kubernetes:
                return [
                    Finding(
                        "mandatory",
                        rule,
                        f"GPU Operator {op.version} does not support {os}; supported: {', '.join(op.kubernetes)}.",
                        op.source,
                        tuple(op.kubernetes),
                    )
                ]
            span = op.kubernetes[os]
            where = os
        else:
            span = op.eks
            where = "Amazon EKS"
        low, high = parse_kube_minor(span[0]), parse_kube_minor(span[1])
        if low <= wanted <= high:
            return [
                Finding("ok", rule, f"GPU Operator {op.version} supports Kubernetes {wanted} on {where}", op.source)
            ]
        fitting = [
            r.version
            for r in reversed(self.data.operators)
            if (span_r := (r.kubernetes.get(os) if os in r.kubernetes else r.eks) if os else r.eks)
            and parse_kube_minor(span_r[0]) <= wanted <= parse_kube_minor(span_r[1])
        ]
        return [
            Finding(
                "mandatory",
                rule,
                f"GPU Operator {op.version} supports Kubernetes {span[0]}-{span[1]} on {where}, not {wanted}; "
                f"use Kubernetes {span[0]}-{span[1]} or an operator release that supports {wanted}: "
                f"{', '.join(fitting[:NEAREST]) or 'none known'}.",
                op.source,
                tuple(fitting[:NEAREST]),
            )
        ]
