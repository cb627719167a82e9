"""Driver versions and images: published tags, precompiled builds, branch lifecycle."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from ..versions import DriverVersion, parse_driver_version
from .findings import (
    ADD_DRIVER,
    BAKED_DRIVER_OS,
    DRIVER_REPOSITORY,
    NEAREST,
    OS_TAG,
    Finding,
    OsName,
    pick,
)
from .rows import (
    DriverBranch,
    PrecompiledBuild,
)
from .state import MatrixState

_KERNEL_RE = re.compile(r"^(?P<line>\d+\.\d+)\.\d+-\d+-(?P<flavour>[a-z][a-z0-9-]*)$")


class DriverQueries(MatrixState):
    """Queries about driver versions, driver container images and driver branches."""

    # ---------------------------------------------------------------- drivers
    def parse_driver(self, version: str) -> DriverVersion:
        """Parse `580.173.02` or a branch `580`; ValueError on anything else."""
        return parse_driver_version(version)

    def branch(self, branch: int) -> DriverBranch | None:
        """The driver branch row (type, EOL, native CUDA, source) or None when unknown."""
        return self._branches.get(branch)

    def known_driver_versions(self, branch: int | None = None) -> list[str]:
        """Every driver version with a published image on any OS (optionally one branch), newest first."""
        versions = {v for row in self.data.driver_images for v in row.versions}
        for op in self.data.operators:
            versions.update(op.drivers)
        parsed = sorted((parse_driver_version(v) for v in versions), reverse=True)
        return [str(v) for v in parsed if branch is None or v.branch == branch]

    def weakest_release(self, driver: str) -> str:
        """A full driver version as is; a bare branch ("580", as baked images state it) as its first known release.

        The exact release a baked image ships depends on the image build, so compatibility is judged
        against the weakest release the branch could be; the branch number alone would read as
        580.0.0, below every real R580 driver. Raises ValueError on a string that is no driver version.
        """
        parsed = parse_driver_version(driver)
        if not parsed.is_branch_only:
            return driver
        known = self.known_driver_versions(parsed.branch)
        return known[-1] if known else driver

    def newer_driver(self, version_or_branch: str) -> str | None:
        """The sentence for a driver (or branch) newer than the matrix records (None: it is not): a branch past every
        recorded one, or a release past the newest recorded of its branch. The matrix was reviewed before it came
        out, so the fix is to add it, never an older driver."""
        parsed = parse_driver_version(version_or_branch)
        newest = parse_driver_version(self.known_driver_versions()[0])
        what = "driver"
        if parsed.branch <= newest.branch:
            in_branch = self.known_driver_versions(parsed.branch)
            if parsed.is_branch_only or not in_branch or parsed <= parse_driver_version(in_branch[0]):
                return None
            newest, what = parse_driver_version(in_branch[0]), f"R{parsed.branch} driver"
        reviewed = max(r.reviewed for r in (*self.data.driver_images, *self.data.driver_branches))
        return (f"driver {parsed.text} is newer than the matrix (its newest {what} is {newest.text}; the driver rows "
                f"were reviewed on {reviewed.isoformat()}). {ADD_DRIVER}.")

    def published_versions(self, os: str) -> list[str]:
        """Driver versions with a conventional image for an OS label (or image OS tag), newest first."""
        row = self._images.get(OS_TAG.get(os, os))
        if row is None:
            return []
        return [str(v) for v in sorted((parse_driver_version(x) for x in row.versions), reverse=True)]

    def _nearest_versions(
        self, wanted: DriverVersion, candidates: Iterable[str], today: date | None = None
    ) -> tuple[str, ...]:
        """Same branch first (newest first), then live branches before end-of-life ones, nearest branch first.
        With `today`, end-of-life branches are left out (no suggestion points to one)."""

        def eol(version: DriverVersion) -> bool:
            row = self.branch(version.branch)
            return row is None or (row.listed_end_of_life if today is None else row.is_end_of_life(today))

        parsed = sorted({parse_driver_version(c) for c in candidates}, reverse=True)
        if today is not None:
            parsed = [v for v in parsed if not eol(v)]
        same = [v for v in parsed if v.branch == wanted.branch]

        others = sorted(
            (v for v in parsed if v.branch != wanted.branch),
            key=lambda v: (eol(v), abs(v.branch - wanted.branch), -v.branch, tuple(-k for k in v.key)),
        )
        return tuple(str(v) for v in (same + others)[:NEAREST])

    def driver_image_ref(
        self, version: str, os: OsName, *, precompiled: bool = False, kernel: str | None = None
    ) -> str:
        """The driver container reference the operator pulls, e.g. nvcr.io/nvidia/driver:535.309.01-ubuntu22.04.

        Precompiled: `<branch>-<kernel>-<os_tag>`; without a kernel the placeholder `<kernel>` stands in.
        Raises ValueError for an OS without operator-built driver containers.
        """
        tag = OS_TAG.get(os)
        if tag is None:
            raise ValueError(
                f"OS {os!r} has no GPU Operator driver container: its node image bakes the driver; "
                "use ubuntu-22.04 or ubuntu-24.04 for operator-installed drivers"
            )
        parsed = parse_driver_version(version)
        if precompiled:
            return f"{DRIVER_REPOSITORY}:{parsed.branch}-{kernel or '<kernel>'}-{tag}"
        return f"{DRIVER_REPOSITORY}:{parsed.text}-{tag}"

    def _precompiled_ci_branches(self, os_tag: str, today: date) -> PrecompiledBuild | None:
        rows = [r for r in self.data.precompiled_builds if r.os_tag == os_tag and r.since <= today]
        return max(rows, key=lambda r: r.since) if rows else None

    def _declarable(self, os: OsName, operator: str | None) -> list[str]:
        """The versions a pool of an operator-installed OS can declare: those with a published image for the OS, and
        in the GPU Operator release's driver list when one is given and lists any of them (issue 46: a suggestion
        the same release would refuse is no suggestion)."""
        published = self.published_versions(os)
        op = self.operator(operator) if operator is not None else None
        listed = [v for v in published if op is not None and v in op.drivers]
        return listed or published

    def driver_image(
        self,
        version: str,
        os: OsName,
        *,
        precompiled: bool = False,
        operator: str | None = None,
        kernel: str | None = None,
        today: date | None = None,
    ) -> list[Finding]:
        """Is there a published driver container for this version (or branch, precompiled) on this OS?"""
        rule = "driver-image-published"
        parsed = parse_driver_version(version)
        if os in BAKED_DRIVER_OS:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"OS {os} ships the NVIDIA driver in its node image; the GPU Operator has no driver container "
                    f"for it (driver {version} cannot be installed by the operator). Set driver.enabled=false and "
                    "toolkit.enabled=false for these nodes, or use ubuntu-22.04/ubuntu-24.04 for operator drivers.",
                    self.data.node_images[0].source,
                )
            ]
        tag = OS_TAG[os]
        if precompiled:
            return self._precompiled_image(
                parsed, os, tag, operator=operator, kernel=kernel, today=today or date.today()
            )
        ref = self.driver_image_ref(version, os)
        images = self._images.get(tag)
        source = images.source if images else self.data.driver_images[0].source
        if parsed.is_branch_only:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"driver {version} is a branch, but conventional driver images are tagged with a full version "
                    f"(<version>-{tag}); pin a full version, or set usePrecompiled for branch-tagged images.",
                    source,
                    self._nearest_versions(parsed, self._declarable(os, operator), today),
                )
            ]
        if images is not None and parsed.text in images.versions:
            return [Finding("ok", rule, f"{ref} is published", source)]
        nearest = self._nearest_versions(parsed, self._declarable(os, operator), today)
        unpublished = self._unpublished.get(parsed.text)
        withheld = next(
            (o for o in (images.override if images else ()) if o.field == "versions" and parsed.text in o.upstream),
            None,
        )
        if unpublished is not None:
            why = f"{unpublished.reason}; the container would sit in ImagePullBackOff"
            source = unpublished.source
        elif withheld is not None:
            why = f"NVIDIA CI built {parsed.text} for {tag} but the registry holds no such tag"
            why += "; the container would sit in ImagePullBackOff"
            source = withheld.source
        elif any(parsed.text in row.versions for row in self.data.driver_images):
            other = [row.os_tag for row in self.data.driver_images if parsed.text in row.versions]
            why = (
                f"NVIDIA builds {parsed.text} only for {', '.join(other)}, not {tag}; "
                "the container would sit in ImagePullBackOff"
            )
            if not any(parse_driver_version(v).branch == parsed.branch for v in (images.versions if images else ())):
                why += f"; R{parsed.branch} was never built for {tag}"
        elif (newer := self.newer_driver(parsed.text)) is not None:
            return [Finding("mandatory", rule, f"{newer} Until then {ref} is not known to exist.", source)]
        else:
            why = "not in NVIDIA's driver-container build history; the container would sit in ImagePullBackOff"
        return [
            Finding(
                "mandatory",
                rule,
                f"driver {parsed.text} has no published image {ref} ({why}); "
                + pick(nearest, f"nearest published for {tag}:",
                       f"no published driver for {tag} is one this pool can take (in support, in the operator "
                       "release's list); change the operator release or the node OS"),
                source,
                nearest,
            )
        ]

    def _precompiled_image(
        self, parsed: DriverVersion, os: str, tag: str, *, operator: str | None, kernel: str | None, today: date
    ) -> list[Finding]:
        rule = "driver-image-published"
        findings: list[Finding] = []
        op = self.operator(operator) if operator else None
        ci = self._precompiled_ci_branches(tag, today)
        if op is not None:
            allowed = op.precompiled.get(os, ())
            if parsed.branch not in allowed:
                choices = tuple(str(b) for b in sorted(allowed, reverse=True))
                findings.append(
                    Finding(
                        "mandatory",
                        rule,
                        f"precompiled driver R{parsed.branch} is not built for {os} under GPU Operator {op.version} "
                        f"({op.version} builds precompiled drivers for "
                        f"{', '.join('R' + c for c in choices) or 'no branch'} on {os}); "
                        + (f"set driver.version to one of {', '.join(choices)} or use a conventional "
                           "(non-precompiled) driver." if choices else
                           "use a conventional (non-precompiled) driver, or another operator release."),
                        op.source,
                        choices,
                    )
                )
        elif ci is not None and parsed.branch not in ci.branches:
            choices = tuple(str(b) for b in sorted(ci.branches, reverse=True))
            findings.append(
                Finding(
                    "mandatory",
                    rule,
                    f"precompiled driver R{parsed.branch} is not built for {tag} (NVIDIA CI builds "
                    f"{', '.join('R' + c for c in choices)} since {ci.since.isoformat()}); choose one of "
                    f"{', '.join(choices)}.",
                    ci.source,
                    choices,
                )
            )
        if not findings and ci is not None and parsed.branch not in ci.branches:
            findings.append(
                Finding(
                    "advisory",
                    rule,
                    f"NVIDIA CI stopped building precompiled R{parsed.branch} images for {tag} (since "
                    f"{ci.since.isoformat()} it builds {', '.join('R' + str(b) for b in ci.branches)}); new kernel "
                    "updates get no image. Move to one of those branches.",
                    ci.source,
                    tuple(str(b) for b in sorted(ci.branches, reverse=True)),
                )
            )
        if kernel is not None:
            findings.extend(self._kernel_findings(kernel, tag))
        if not findings:
            findings.append(
                Finding(
                    "ok",
                    rule,
                    f"precompiled R{parsed.branch} images are built for {tag}",
                    ci.source if ci else self.data.precompiled_builds[0].source,
                )
            )
        return findings

    def _kernel_findings(self, kernel: str, tag: str) -> list[Finding]:
        rule = "driver-image-published"
        row = next((r for r in self.data.precompiled_kernels if r.os_tag == tag), None)
        if row is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"no precompiled driver kernels are recorded for {tag}",
                    self.data.precompiled_kernels[0].source,
                )
            ]
        match = _KERNEL_RE.match(kernel)
        if match is None:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"kernel {kernel!r} is not an Ubuntu kernel release (expected e.g. 6.8.0-1024-aws, as `uname -r` "
                    "prints it); precompiled images are tagged per kernel.",
                    row.source,
                )
            ]
        problems = []
        if match.group("line") not in row.kernel_lines:
            problems.append(f"kernel line {match.group('line')} (built: {', '.join(row.kernel_lines)})")
        if match.group("flavour") not in row.flavours:
            problems.append(f"flavour {match.group('flavour')} (built: {', '.join(row.flavours)})")
        if problems:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"precompiled driver images for {tag} are not built for kernel {kernel}: "
                    f"{'; '.join(problems)}. Use an LTS kernel with a built flavour, or a conventional driver.",
                    row.source,
                    row.kernel_lines,
                )
            ]
        return []

    def branch_move(self, old: str, new: str) -> list[Finding]:
        """A move from the driver (or branch) `old` to `new` onto a branch NVIDIA supports for less time: advisory,
        with both end-of-life months (issue 46: R580, supported to June 2028, to R595, to March 2027, passed with no
        word). Only where the old value is known: the pack's Analyze gets the new inputs alone (research
        engine_phases.md: `Analyze` gets the checked inputs), so this is `tools.matrix check --from-driver`."""
        rule = "driver-branch-shorter-support"
        before, after = parse_driver_version(old), parse_driver_version(new)
        was, now = self.branch(before.branch), self.branch(after.branch)
        if was is None or now is None or was.branch == now.branch or was.eol is None or now.eol is None:
            return []
        if now.eol >= was.eol:
            return [Finding("ok", rule, f"R{now.branch} ({now.type}, to {now.end_of_life_label}) is supported at "
                                        f"least as long as R{was.branch} ({was.type}, to {was.end_of_life_label})",
                            now.source)]
        months = (was.eol.year - now.eol.year) * 12 + was.eol.month - now.eol.month
        return [Finding(
            "advisory", rule,
            f"moving from R{was.branch} ({was.type}, supported until {was.end_of_life_label}) to R{now.branch} "
            f"({now.type}, supported until {now.end_of_life_label}) shortens NVIDIA support by {months} months: the "
            f"pool needs another driver move by {now.end_of_life_label}. Stay on R{was.branch} unless R{now.branch} "
            "brings something the workload needs (a GPU, a CUDA release).",
            now.source,
            (str(was.branch),) if before.is_branch_only else (before.text,),
        )]

    def branch_lifecycle(
        self,
        version_or_branch: str,
        today: date,
        *,
        available: Iterable[int] | None = None,
        choices: Iterable[str] | None = None,
    ) -> list[Finding]:
        """EOL check: advisory once NVIDIA's end of life has passed (or the branch is listed as EOL).

        `available`: the branches the pool can move to (an Ubuntu OS's published driver images, the branches an
        image line ships); the advice names only live ones among them. None: every live branch.
        `choices`: what the pool can declare as it is (Ubuntu: published versions, a baked image: its branches);
        the suggestions are the newest choice of each live branch, none when no choice is live (a baked image
        then needs another release: the message says so)."""
        rule = "driver-branch-eol"
        parsed = parse_driver_version(version_or_branch)
        row = self.branch(parsed.branch)
        allowed = set(available) if available is not None else None
        if row is None and (newer := self.newer_driver(parsed.text)) is not None:
            return [Finding("mandatory", "driver-branch-known", newer, self.data.driver_branches[0].source)]
        if row is None:
            live = self._live_branches(today, allowed)
            return [
                Finding(
                    "mandatory",
                    "driver-branch-known",
                    f"driver branch R{parsed.branch} (from {version_or_branch}) is not a known NVIDIA data-center "
                    f"branch; choose one of {', '.join('R' + str(b) for b in live)}.",
                    self.data.driver_branches[0].source,
                    self._choices_of(live, choices),
                )
            ]
        if not row.is_end_of_life(today):
            until = f" until {row.end_of_life_label}" if row.eol else ""
            return [Finding("ok", rule, f"R{row.branch} ({row.type}) is supported{until}", row.source)]
        live = self._live_branches(today, allowed)
        when = f"reached end of life in {row.end_of_life_label}" if row.eol else "is listed by NVIDIA as end of life"
        nearest = self._choices_of(live, choices)
        if not live:
            move = "No supported branch is available to this pool: change its OS or image."
        elif choices is not None and not nearest:
            move = f"Move to an image release that ships a supported branch: {', '.join('R' + str(b) for b in live)}."
        else:
            move = f"Move to a supported branch: {', '.join('R' + str(b) for b in live)}."
        return [
            Finding(
                "advisory",
                rule,
                f"R{row.branch} {when}: driver {version_or_branch} gets no more bug or security fixes. {move}",
                row.source,
                nearest,
            )
        ]

    @staticmethod
    def _choices_of(live: list[int], choices: Iterable[str] | None) -> tuple[str, ...]:
        """The newest of `choices` on each of the `live` branches, in their order; the bare branches without."""
        if choices is None:
            return tuple(str(b) for b in live)
        parsed = sorted((parse_driver_version(c) for c in choices), reverse=True)
        return tuple(str(next(v for v in parsed if v.branch == b)) for b in live if any(v.branch == b for v in parsed))

    def _live_branches(self, today: date, available: set[int] | None = None) -> list[int]:
        """Branches past no end of life that have known releases (and are `available`): LTSB, then PB, then NFB."""
        released = {parse_driver_version(v).branch for v in self.known_driver_versions()}
        if available is not None:
            released &= available
        live = [r for r in self.data.driver_branches if not r.is_end_of_life(today) and r.branch in released]
        order = {"LTSB": 0, "PB": 1, "NFB": 2}
        return [row.branch for row in sorted(live, key=lambda r: (order[r.type], -r.branch))]
