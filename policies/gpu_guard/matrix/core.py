"""The `Matrix`: every query, and the aggregate `check` / `drivers` of one node pool configuration."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date

from ..versions import DriverVersion, parse_driver_version, parse_kube_minor
from .cuda import ToolkitMode
from .findings import (
    BAKED_DRIVER_OS,
    Finding,
    OsName,
    worst_level,
)
from .images import ImageQueries
from .results import ImageDriver, InstanceType
from .serving_images import ServingImageQueries


class Matrix(ImageQueries, ServingImageQueries):
    """Queries over the validated matrix. Construct through `load_matrix()`."""

    # ---------------------------------------------------------------- aggregate
    def check(
        self,
        *,
        os: OsName,
        driver: str,
        operator: str | None,
        kubernetes: str | None = None,
        kubelet: str | None = None,
        instance_type: str | None = None,
        cuda: str | None = None,
        precompiled: bool = False,
        image_version: str | None = None,
        today: date | None = None,
        toolkit_mode: ToolkitMode | None = None,
        disable_require: bool = False,
        branch_pin: str | None = None,
        pool_kind: str | None = None,
        suggest: bool = True,
    ) -> list[Finding]:
        """Every finding for one node pool configuration. `cuda` is a version or an image reference;
        `image_version` pins the AL2023 / Bottlerocket release (None: the newest as of `today`);
        `toolkit_mode` how the container toolkit injects GPUs (None: the operator chart's default on operator-
        managed OSes, legacy assumed elsewhere); `disable_require`: the container sets NVIDIA_DISABLE_REQUIRE=true;
        `branch_pin`: a Bottlerocket pool's settings.kernel.drivers.nvidia.branch (lts / pb); `pool_kind`:
        managed-node-group, self-managed or karpenter-nodepool (None: the answer covers each); `suggest`: False
        skips re-checking the Kubernetes versions it suggests (the inner calls of that re-check).

        Every suggestion (`nearest`) is one the pool can take: a driver the OS publishes an image for (Ubuntu) or
        a branch the image carries (Bottlerocket, AL2023), on a live branch the instance's GPU and family allow."""
        today = today or date.today()
        parsed = parse_driver_version(driver)
        candidates = self.driver_choices(os, operator, instance_type, image_version, today,
                                         kubernetes=kubelet or kubernetes, branch_pin=branch_pin)
        available = self.branches_available(os, operator)
        known = self.instance_type(instance_type) if instance_type is not None else None
        if known is not None:  # only what the instance's GPU and family are shown to run
            candidates = [v for v in candidates if self.drives(known, v)]
            available = {b for b in available if self.drives(known, str(b))}
            if known.driver_kind == "grid" and os not in BAKED_DRIVER_OS:
                # An operator-installed driver is the data-center (Tesla) driver, which no GRID family runs
                # (gpu-driver-kind says what does): no driver version is a suggestion this pool can take.
                candidates, available = [], set()
        findings: list[Finding] = []
        image_judged = False
        if os in BAKED_DRIVER_OS:
            node_kubernetes = kubelet or kubernetes
            if node_kubernetes is not None:
                image = self.driver_for_image(os, image_version, instance_type, node_kubernetes, today=today,
                                              branch_pin=branch_pin)
                image_judged = image is not None and image.release is not None
                findings.extend(
                    self.image_findings(os, image_version, instance_type, node_kubernetes, driver=driver, today=today,
                                        branch_pin=branch_pin)
                )
            else:
                findings.extend(self._baked_driver_findings(os, parsed, today, image_version, instance_type))
        else:
            findings.extend(self.driver_image(driver, os, precompiled=precompiled, operator=operator, today=today))
        if operator is not None:
            findings.extend(self.operator_branch_support(operator, os, driver, precompiled=precompiled, today=today))
            if kubernetes is not None:
                findings.extend(self.operator_kubernetes(operator, kubernetes, os, driver=driver))
                op = self.operator(operator)
                if op is not None and os not in BAKED_DRIVER_OS and os not in op.kubernetes:
                    # no range for the OS: EKS's
                    findings.extend(self.operator_kubernetes(operator, kubernetes, driver=driver, driver_os=os))
        findings.extend(self.branch_lifecycle(driver, today, available=available, choices=candidates))
        if kubernetes is not None:
            def fits(version: str) -> bool:
                """Does the pool take this control plane version (kubelet as given, or following it)?"""
                again = self.check(os=os, driver=driver, operator=operator, kubernetes=version, kubelet=kubelet,
                                   instance_type=instance_type, precompiled=precompiled, image_version=image_version,
                                   today=today, branch_pin=branch_pin, pool_kind=pool_kind, suggest=False)
                return not any(f.level == "mandatory" and f.rule not in mandatory_now for f in again)

            mandatory_now = {f.rule for f in findings if f.level == "mandatory"}
            findings.extend(self.eks_lifecycle(kubernetes, today, fits=fits if suggest else None))
            if kubelet is not None:
                findings.extend(self.kubelet_skew(kubernetes, kubelet))
            if not image_judged:
                findings.extend(
                    self.node_image_findings(os, kubelet or kubernetes, today=today, control_plane=kubernetes)
                )
        inst = None
        if instance_type is not None:
            inst = self.instance_type(instance_type)
            findings.extend(self.architecture_support(instance_type, driver, candidates=candidates, today=today))
            if inst is not None:
                findings.extend(self.shown_branch_findings(inst, driver, candidates=candidates, today=today))
                findings.extend(self.driver_kind_findings(inst, os, driver))
            if inst is not None and inst.fraction is not None:
                # What the pool is (the CLI and the config say it; the pack says it where a GPU request meets it,
                # gpu-workload-schedulable): one logical GPU on the GRID driver, which Karpenter counts as none.
                findings.append(self.fractional_gpu_finding(inst, pool_kind))
        if known is not None:
            findings = [self._for_instance(f, known, today, os) for f in findings]
        if cuda is not None:
            if toolkit_mode is None and os not in BAKED_DRIVER_OS:
                toolkit_mode = self.toolkit_mode_for_operator(operator)
            takes = self.pool_takes(os=os, operator=operator, kubernetes=kubernetes, kubelet=kubelet,
                                    instance_types=(instance_type,), precompiled=precompiled,
                                    image_version=image_version, today=today, branch_pin=branch_pin,
                                    pool_kind=pool_kind, driver=driver)
            findings.extend(self._cuda_findings(cuda, driver, inst, toolkit_mode, disable_require, pool=takes,
                                                 today=today))
        return findings

    def pool_takes(
        self, *, os: OsName, operator: str | None, kubernetes: str | None = None, kubelet: str | None = None,
        instance_types: tuple[str | None, ...] = (None,), precompiled: bool = False, image_version: str | None = None,
        today: date, branch_pin: str | None = None, pool_kind: str | None = None, driver: str | None = None,
    ) -> Callable[[str], str | None]:
        """A driver another rule would suggest (a full version), as this pool would declare it (the version; the
        branch on a baked image), or None where the pool cannot take it: not among the drivers the pool can
        declare (`driver_choices`: on Ubuntu those with an image for the OS, in the operator release's list when
        it lists any), or refused by `check` itself on any of its instance types: a mandatory finding about the
        driver, or one the pool's own `driver` does not already get (a Kubernetes version past support refuses
        every driver alike, so it refuses none of them)."""
        types = instance_types or (None,)
        choices = {t: self.driver_choices(os, operator, t if t and self.is_gpu_instance(t) else None, image_version,
                                          today, kubernetes=kubelet or kubernetes, branch_pin=branch_pin)
                   for t in types}
        memo: dict[str, str | None] = {}

        def refused(candidate: str, instance: str | None) -> set[str]:
            findings = self.check(os=os, driver=candidate, operator=operator, kubernetes=kubernetes, kubelet=kubelet,
                                  instance_type=instance if instance and self.is_gpu_instance(instance) else None,
                                  precompiled=precompiled, image_version=image_version, today=today,
                                  branch_pin=branch_pin, pool_kind=pool_kind, suggest=False)
            return {f.rule for f in findings if f.level == "mandatory"}

        already: dict[str | None, set[str]] = {}
        for t in types:
            try:
                already[t] = refused(driver, t) - _POOL_DRIVER_RULES if driver is not None else set()
            except ValueError:
                already[t] = set()

        def takes(version: str) -> str | None:
            shown = str(parse_driver_version(version).branch) if os in BAKED_DRIVER_OS else version
            if shown not in memo:
                ok = all(shown in choices[t] for t in types) and all(
                    not (refused(shown, t) - already[t]) for t in types
                )
                memo[shown] = shown if ok else None
            return memo[shown]

        return takes

    def newest_image_release(self, os: OsName, today: date) -> str | None:
        """The AL2023 / Bottlerocket release a pool that pins none is judged as: the newest recorded as of `today`
        (None: an OS whose driver is not baked in, or no recorded release yet)."""
        if os not in BAKED_DRIVER_OS:
            return None
        row = self._latest_release(os, today)
        return row.release if row is not None else None

    def _for_instance(self, finding: Finding, inst: InstanceType, today: date, os: OsName | None = None) -> Finding:
        """A driver suggestion of another rule (a published image, an operator-listed version) kept only where the
        instance's GPU and family are shown to run it: never an operator-installed (Tesla) driver for a GRID family
        (gpu-driver-kind refuses every one of them)."""
        if finding.rule not in _DRIVER_RULES or not finding.nearest:
            return finding
        operator_on_grid = inst.driver_kind == "grid" and os is not None and os not in BAKED_DRIVER_OS
        kept = tuple(c for c in finding.nearest
                     if not _is_driver(c) or (not operator_on_grid and self.drives(inst, c, today)))
        if kept == finding.nearest:
            return finding
        return dataclasses.replace(finding, nearest=kept)

    def driver_choices(
        self, os: OsName, operator: str | None, instance_type: str | None, image_version: str | None, today: date,
        *, kubernetes: str | None = None, branch_pin: str | None = None,
    ) -> list[str]:
        """What a pool of this OS can declare instead of its driver: on Ubuntu the versions with a published
        driver image for the OS (those the operator release lists, when it lists any), on Bottlerocket / AL2023
        the branch a node of that image, Kubernetes version, instance type and branch pin loads (every branch the
        image carries where it cannot be told)."""
        if os in BAKED_DRIVER_OS:
            try:
                if kubernetes is not None:
                    image = self.driver_for_image(os, image_version, instance_type, kubernetes, today=today,
                                                  branch_pin=branch_pin)
                    if image is None or not image.drivers:
                        return []
                    loaded = [image.version] if image.version is not None else list(image.drivers)
                    return sorted({str(parse_driver_version(v).branch) for v in loaded})
                return self._baked_candidates(os, instance_type, image_version, today)
            except ValueError:
                return []
        return self._declarable(os, operator)

    def branches_available(self, os: OsName, operator: str | None = None) -> set[int]:
        """Driver branches a pool of this OS can move to: on Ubuntu those with a published driver image for the OS
        (and in the operator release's list for it, when given), on Bottlerocket / AL2023 those any recorded image
        release or dated step ships."""
        if os in BAKED_DRIVER_OS:
            branches = {parse_driver_version(v).branch for r in self.image_releases(os)
                        for versions in r.drivers.values() for v in versions}
            row = self._node_image_row(os)
            branches |= {step.branch for step in (row.baked_driver if row is not None else ())}
            return branches
        branches = {parse_driver_version(v).branch for v in self.published_versions(os)}
        op = self.operator(operator) if operator is not None else None
        if op is not None and os in op.branches:
            branches &= set(op.branches[os])
        return branches

    def _baked_driver_findings(
        self, os: OsName, parsed: DriverVersion, today: date, image_version: str | None,
        instance_type: str | None = None,
    ) -> list[Finding]:
        """No Kubernetes version given: is the declared branch one the release loads, for some version, on the
        instance type (issue 46: v1.68.0 carries R595 only beside R580 in its 1.37 variant, and a g6.xlarge loads
        R580 there, so "ships R580 and R595" was no answer for a g6.xlarge pool)?"""
        rule = "baked-driver-branch"
        inst = instance_type if instance_type is not None and self.is_gpu_instance(instance_type) else None
        branches = self._baked_candidates(os, inst, image_version, today)
        if not branches:
            return []
        image = self._any_minor_image(os, inst, image_version, today)
        source = image.source if image is not None else self.data.node_images[0].source
        shipped = " and ".join(f"R{b}" for b in branches)
        on = f" on {inst}" if inst is not None else ""
        where = (
            f"{os} {image.release} {'loads' if inst else 'ships'} driver branch {shipped}{on}"
            if image is not None and image.release is not None
            else f"{os} NVIDIA images ship driver branch {shipped} (as of {today.isoformat()})"
        )
        if str(parsed.branch) not in branches:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{where}, not R{parsed.branch}; declare driver "
                    f"{' or '.join(branches)} for this pool, or use Ubuntu with an operator-installed driver.",
                    source,
                    tuple(branches),
                )
            ]
        return [Finding("ok", rule, where, source)]

    def _cuda_findings(
        self,
        cuda: str,
        driver: str,
        inst: InstanceType | None,
        toolkit_mode: ToolkitMode | None = None,
        disable_require: bool = False,
        *,
        pool: Callable[[str], str | None] | None = None,
        today: date | None = None,
    ) -> list[Finding]:
        image = self.image_cuda(cuda) if (":" in cuda or "/" in cuda) else None
        if image is None and (":" in cuda or "/" in cuda):
            return [
                Finding(
                    "mandatory",
                    "gpu-workload-cuda-declared",
                    f"the CUDA runtime of image {cuda} is unknown (not an nvidia/cuda tag nor an NGC release in the "
                    "matrix); declare it with the gpu-platform.io/cuda label, e.g. 12.8.",
                    self.data.ngc_images[0].source,
                )
            ]
        version = image.cuda if image else cuda
        findings = self.cuda_driver(
            version,
            driver,
            forward_compat_image=image.forward_compat if image else False,
            admitted_branches=image.admitted_branches if image else None,
            data_center_gpu=inst.data_center if inst else True,
            toolkit_mode=toolkit_mode,
            disable_require=disable_require,
            pool=pool,
            today=today,
        )
        if inst is None:
            assumed = "no instance type given: judged as a data-center GPU (forward compatibility needs one)"
            findings = [
                Finding(f.level, f.rule, f"{f.message} [{assumed}]", f.source, f.nearest)
                if f.level != "ok" and "forward compatibility" in f.message
                else f
                for f in findings
            ]
        if inst is not None:
            findings.extend(self.cuda_architecture(version, inst.name))
        return findings

    def drivers(
        self,
        *,
        os: OsName,
        operator: str,
        instance_type: str | None = None,
        image_version: str | None = None,
        today: date | None = None,
    ) -> list[str]:
        """Driver versions that fit (no mandatory finding) the OS, operator and instance type: those on a branch in
        support at `today` first, then the end-of-life ones, newest first within each."""
        today = today or date.today()
        op = self.operator(operator)
        if op is None and (newer := self.newer_operator(operator)) is not None:
            raise ValueError(newer)
        if op is None:
            raise ValueError(self.unknown_operator_text(operator)[0])
        if os in BAKED_DRIVER_OS:
            candidates = self._baked_candidates(os, instance_type, image_version, today)
        else:
            candidates = list(op.drivers)
        fitting = []
        for version in candidates:
            findings: list[Finding] = []
            if os not in BAKED_DRIVER_OS:
                findings += self.driver_image(version, os, operator=operator, today=today)
                findings += self.operator_branch_support(operator, os, version)
            if instance_type is not None:
                findings += self.architecture_support(instance_type, version, today=today)
                inst = self.instance_type(instance_type)
                if inst is not None:
                    findings += self.driver_kind_findings(inst, os, version)
            if worst_level(findings) != "mandatory":
                fitting.append(version)
        # Branches in support first (issue 46: an end-of-life R610 headed the list), newest first within each.
        ordered = sorted((parse_driver_version(v) for v in fitting), reverse=True)
        ordered.sort(key=lambda v: self._branch_ended(v.branch, today))
        return [str(v) for v in ordered]

    def _any_minor_image(
        self, os: OsName, instance_type: str | None, image_version: str | None, today: date
    ) -> ImageDriver | None:
        """The image of the newest Kubernetes version any recorded release (or the image line) publishes."""
        minors = sorted(
            {m for row in self.image_releases(os) for m in row.drivers if m != "*"}, key=parse_kube_minor
        )
        node_row = self._node_image_row(os)
        minor = minors[-1] if minors else (node_row.published[-1] if node_row and node_row.published else None)
        if minor is None:
            return None
        return self.driver_for_image(os, image_version, instance_type, minor, today=today)

    def _baked_candidates(
        self, os: OsName, instance_type: str | None, image_version: str | None, today: date
    ) -> list[str]:
        """Branches a baked-driver image of that release loads on that instance type, over every Kubernetes
        version the release publishes."""
        image = self._any_minor_image(os, instance_type, image_version, today)
        if image is None:
            return []
        row = next((r for r in self.image_releases(os) if r.release == image.release), None)
        minors = [m for m in row.drivers if m != "*"] if row is not None else []
        images = [image] + [
            found
            for m in minors
            if (found := self.driver_for_image(os, image_version, instance_type, m, today=today)) is not None
        ]
        chosen = {v for found in images for v in ([found.version] if found.version else found.drivers)}
        return sorted({str(parse_driver_version(v).branch) for v in chosen})


# Rules that judge the driver itself: a suggested driver they refuse is no suggestion, whatever the pool's own gets.
_POOL_DRIVER_RULES = frozenset({"driver-image-published", "driver-branch-supported", "driver-branch-known",
                                "baked-driver-branch", "gpu-architecture-supported", "gpu-driver-kind"})

# Rules whose suggestions are driver versions or branches.
_DRIVER_RULES = frozenset({"driver-image-published", "driver-branch-supported", "driver-branch-eol",
                           "driver-branch-known", "baked-driver-branch"})


def _is_driver(value: str) -> bool:
    try:
        parse_driver_version(value)
    except ValueError:
        return False
    return True
