"""GPU Operator releases: the drivers and branches they list per OS, their Kubernetes ranges."""

from __future__ import annotations

from datetime import date

from ..versions import parse_driver_version, parse_kube_minor
from .drivers import DriverQueries
from .findings import (
    BAKED_DRIVER_OS,
    NEAREST,
    Finding,
    OsName,
    fmt_versions,
    pick,
)
from .rows import OperatorRelease
from .state import operator_key


class OperatorQueries(DriverQueries):
    """Queries about GPU Operator releases."""

    # ---------------------------------------------------------------- GPU Operator
    def unconfirmed_operator_note(self, version: str) -> str:
        """Why a release named second-hand is not in the matrix ('' when it is not such a release)."""
        row = next((r for r in self.data.operators_unconfirmed if r.version == version), None)
        return f" ({version} is unconfirmed: {row.note}; source {row.source})" if row is not None else ""

    def unknown_operator_text(self, version: str) -> tuple[str, tuple[str, ...]]:
        """The short answer for a GPU Operator version the matrix has no row of, and the releases it names: an
        unconfirmed one (its note, and the newest release), one older than every row (the oldest and the newest),
        one between two rows (those two), one that is no version (the newest). Never the whole list of releases."""
        releases = self.operators()  # oldest first
        oldest, newest = releases[0], releases[-1]
        note = self.unconfirmed_operator_note(version)
        if note:
            return (f"GPU Operator {version} is not in the compatibility matrix{note}; the newest release it records "
                    f"is {newest}", (newest,))
        try:
            wanted = operator_key(version)
        except ValueError:
            return (f"GPU Operator {version!r} is not a release version; releases are written v<YY>.<M>.<patch>, "
                    f"e.g. {newest}", (newest,))
        if wanted < operator_key(oldest):
            return (f"GPU Operator {version} is older than every release the matrix records (the oldest is {oldest}), "
                    f"so nothing is judged for it; upgrade to a recorded release, e.g. {newest}", (newest, oldest))
        lower = max((r for r in releases if operator_key(r) < wanted), key=operator_key)
        higher = min((r for r in releases if operator_key(r) > wanted), key=operator_key)
        return (f"GPU Operator {version} is not a release the matrix records; the nearest are {lower} and {higher}",
                (higher, lower))

    def _unknown_operator(self, version: str) -> Finding:
        newer = self.newer_operator(version)
        if newer is not None:
            return Finding("mandatory", "operator-known", f"{newer}.", self.data.operators[-1].source)
        text, nearest = self.unknown_operator_text(version)
        return Finding("mandatory", "operator-known", f"{text}.", self.data.operators[-1].source, nearest)

    def operator_branch_support(
        self, operator: str, os: OsName, driver: str, *, precompiled: bool = False, today: date | None = None
    ) -> list[Finding]:
        """Does this operator release support the driver's branch (and version) on this OS?

        The suggestions are versions the release lists for the OS that have a published driver image there and,
        with `today`, are on a branch before NVIDIA's end of life."""
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
            return [self._os_not_listed(op, os, rule, parsed.branch)]
        published = set(self.published_versions(os))
        os_drivers = [
            d for d in op.drivers
            if parse_driver_version(d).branch in branches and (precompiled or d in published)
            and (today is None or not self._branch_ended(parse_driver_version(d).branch, today))
        ]
        if parsed.branch not in branches:
            extra = ""
            floor = self._first_built_branch(os)
            if parsed.branch == 535 and os == "ubuntu-24.04":
                extra = " NVIDIA never built R535 for Ubuntu 24.04; Ubuntu 24.04 needs R570/R580 or newer."
            elif floor is not None and parsed.branch < floor:
                extra = f" NVIDIA never built R{parsed.branch} for {os}; its driver images start at R{floor}."
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
                    f"Nearest supported drivers: {fmt_versions(nearest) or 'none on a live branch'}.",
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
                    f"{op.version}'s component matrix; NVIDIA tested: "
                    f"{fmt_versions(nearest) or 'none on a live branch'}.",
                    op.source,
                    nearest,
                )
            ]
        return [
            Finding(
                "ok", rule, f"GPU Operator {op.version} lists driver {driver} (R{parsed.branch}) for {os}", op.source
            )
        ]

    def _branch_ended(self, branch: int, today: date) -> bool:
        row = self.branch(branch)
        return row is None or row.is_end_of_life(today)

    def _first_built_branch(self, os: OsName) -> int | None:
        """The oldest branch with a conventional driver image for an operator-installed OS (None: none recorded)."""
        versions = self.published_versions(os)
        return min(parse_driver_version(v).branch for v in versions) if versions else None

    def _os_not_listed(
        self, op: OperatorRelease, os: OsName, rule: str, branch: int | None = None, kubernetes: str | None = None
    ) -> Finding:
        """An operator release whose docs do not list the OS: advisory, since nothing on the deploy path checks it.

        The operator builds the driver image tag from the GPU node's Node Feature Discovery os-release labels
        (`<version>-<ID><VERSION_ID>`, e.g. 595.91.07-ubuntu26.04) with no list of supported systems, at v26.3.3
        (controllers/state_manager.go:641-680) as at v26.7.0 (state_manager.go:579-611, object_controls.go:3423-3427):
        https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/controllers/state_manager.go#L579-L611
        So an unlisted OS fails only where the image tag is missing (ImagePullBackOff, the first field report's
        failure), and `driver-image-published` judges that as mandatory on its own. What is left here is NVIDIA's
        support statement: advisory. The suggestions are the releases that list the OS (and the pool's branch on it).
        """
        listing = [
            r.version
            for r in reversed(self.data.operators)
            if os in r.branches and (branch is None or branch in r.branches[os]) and r.status != "end-of-support"
            and (kubernetes is None or os not in r.kubernetes
                 or parse_kube_minor(r.kubernetes[os][0]) <= parse_kube_minor(kubernetes)
                 <= parse_kube_minor(r.kubernetes[os][1]))
        ]
        supported_os = ", ".join(op.branches) or "no OS"
        first = next((r.version for r in self.data.operators if os in r.branches), None)
        since = f"; NVIDIA lists {os} from {first} on" if first else ""
        branch_text = f"R{branch} on " if branch is not None else ""
        move = f"Move to {', '.join(listing[:NEAREST])} for a supported combination." if listing else (
            f"No supported GPU Operator release in the matrix lists {branch_text}{os}."
        )
        return Finding(
            "advisory",
            rule,
            f"GPU Operator {op.version} does not list {os} as a supported OS (it lists {supported_os}{since}). "
            f"The operator still installs a driver there, pulling the image tagged for the node's OS, so the pool "
            f"works only where that image is published (driver-image-published); NVIDIA's support statement is "
            f"what is missing. {move}",
            op.source,
            tuple(listing[:NEAREST]),
        )

    def operator_kubernetes(
        self, operator: str, kubernetes: str, os: OsName | None = None, *, driver: str | None = None,
        driver_os: OsName | None = None,
    ) -> list[Finding]:
        """Does this operator release support the Kubernetes version (on this OS, or on EKS when os is None)?

        `driver`: the pool's driver; the suggested releases then also support its branch on the OS (`os`, or
        `driver_os` when the EKS range is asked for an OS the release does not list)."""
        branch_os = os or driver_os
        rule = "operator-kubernetes-supported"
        op = self.operator(operator)
        if op is None:
            return [self._unknown_operator(operator)]
        wanted = parse_kube_minor(kubernetes)
        if os is not None and os in BAKED_DRIVER_OS:
            span = op.eks
            where = f"Amazon EKS (GPU Operator {op.version} lists no {os} nodes)"
        elif os is not None and os not in op.kubernetes:
            branch = parse_driver_version(driver).branch if driver is not None else None
            return [self._os_not_listed(op, os, rule, branch, kubernetes)]  # the EKS range is the os=None question
        elif os is not None:
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
        offered = self.eks_span(span)
        fitting = [
            r.version
            for r in reversed(self.data.operators)
            if (span_r := (r.kubernetes.get(os) if os in r.kubernetes else r.eks) if os else r.eks)
            and parse_kube_minor(span_r[0]) <= wanted <= parse_kube_minor(span_r[1])
            and (driver is None or branch_os is None or branch_os in BAKED_DRIVER_OS
                 or parse_driver_version(driver).branch in r.branches.get(branch_os, ()))
        ]
        # The range as EKS offers it (issue 46: "1.33-1.37" where EKS has no 1.37), NVIDIA's own where it differs.
        listed = f"{span[0]}-{span[1]}"
        if offered is None:
            supports = f"supports Kubernetes {listed} on {where} (none of them an Amazon EKS version in the matrix)"
            instead = "use an operator release that supports"
        else:
            shown = offered[0] if offered[0] == offered[1] else f"{offered[0]}-{offered[1]}"
            cut = "" if offered == (span[0], span[1]) else (
                f" (NVIDIA lists {listed}; the rest is not an Amazon EKS version)")
            supports = f"supports Kubernetes {shown} on {where}{cut}"
            instead = f"use Kubernetes {shown} or an operator release that supports"
        releases = pick(fitting[:NEAREST], f"{instead} {wanted}:",
                        f"no GPU Operator release in the matrix supports {wanted} on {where}"
                        + ("" if offered is None else f"; use Kubernetes {shown}"))
        return [
            Finding(
                "mandatory",
                rule,
                f"GPU Operator {op.version} {supports}, not {wanted}; {releases}",
                op.source,
                tuple(fitting[:NEAREST]),
            )
        ]

    def eks_span(self, span: tuple[str, str]) -> tuple[str, str] | None:
        """The part of a Kubernetes range that Amazon EKS offers (the matrix's `eks_versions`): its first and last
        EKS version, or None where EKS offers none of it."""
        low, high = parse_kube_minor(span[0]), parse_kube_minor(span[1])
        inside = [r.version for r in self.data.eks_versions if low <= parse_kube_minor(r.version) <= high]
        if not inside:
            return None
        ordered = sorted(inside, key=parse_kube_minor)
        return ordered[0], ordered[-1]
