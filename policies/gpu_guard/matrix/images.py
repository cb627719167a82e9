"""Node image releases: which driver a node of a pinned (or the latest) AL2023 / Bottlerocket release loads.

An AL2023 NVIDIA AMI from release v20260917 on carries two driver trees and picks one at first boot from the
GPUs it finds (awslabs/amazon-eks-ami PR #2819, templates/al2023/runtime/gpu/resolve-nvidia-driver.sh); a
Bottlerocket release publishes one `aws-k8s-<minor>-nvidia` variant per Kubernetes version, each with its
driver (bottlerocket.dev "GPU Driver Versions" table of that release). The rows are `image_releases` of
matrix.yaml; this module holds the rules that read them:

- a pinned release is judged by its own row when one is recorded, else by the newest recorded row before it
  (a step), whose published set is only trusted where the next recorded row agrees;
- with no pin (or `latest`), the newest recorded row once the judging day has reached its date, else the
  older date-based `baked_driver` steps of `node_images`;
- among several drivers: `al2023-open-supported-devices` (the resolve script's order: the first (LTS) tree
  unless the GPU is only in the second (PB) tree's open supported-devices list; g4dn/g5/g5g always the
  first), or `undocumented` (no primary source says, so no branch is asserted).

For callers (Karpenter pools, the pack): `Matrix.driver_branch_for_image(os, image_version, instance_type,
kubernetes, today=...)` gives the branch (int, or None where no source tells); `Matrix.driver_for_image(...)`
gives the whole `ImageDriver` (release step, published?, every driver carried, the rule in words);
`Matrix.image_findings(...)` the findings of rules node-image-published and baked-driver-branch;
`parse_image_version(os, value)` normalises `al2023@v20260917` / `1.35.2-20260917` / `1.48.0-0b7d6d27` / an AMI
name / `latest`.
"""

from __future__ import annotations

import re
from datetime import date

from ..versions import parse_driver_version, parse_kube_minor
from .findings import BAKED_DRIVER_OS, UNJUDGED_MARK, Finding
from .nodes import NodeQueries
from .results import ImageDriver, InstanceType
from .rows import ImageRelease

# The forms a release is written in, per image line (each cited where the matrix reads them, docs/matrix.md):
# - Karpenter's alias (`al2023@v20251209`, `bottlerocket@v1.48.0`) and the bare release tag;
# - the EKS API's `releaseVersion` of a managed node group (API_Nodegroup, CreateNodegroup): AL2023 writes the
#   Kubernetes version and the build date (`1.35.0-20251209`, "Amazon EKS optimized Amazon Linux AMI versions"),
#   Bottlerocket its own version and the build's commit (`1.48.0-0b7d6d27`; as EKS reports it, e.g.
#   aws-controllers-k8s/community issue 2644: `releaseVersion: 1.47.0-6154605b` on BOTTLEROCKET_x86_64);
# - the AMI name (and the SSM parameter path that names it): `amazon-eks-node-al2023-x86_64-nvidia-1.35-v20251209`
#   (an older line carried the driver branch, `...-nvidia-560-1.31-v...`) and
#   `bottlerocket-aws-k8s-1.35-nvidia-x86_64-v1.48.0-0b7d6d27`.
_AL2023_FORMS = (
    re.compile(r"^(?:al2023@)?v?(?P<date>\d{8})$", re.IGNORECASE),
    re.compile(r"^\d+\.\d+\.\d+-(?P<date>\d{8})$"),
    re.compile(r"^amazon-eks-node-al2023-(?:x86_64|arm64)-[a-z]+(?:-\d+)?-\d+\.\d+-v(?P<date>\d{8})$"),
)
_BOTTLEROCKET_FORMS = (
    re.compile(r"^(?:bottlerocket@)?v?(?P<version>\d+\.\d+\.\d+)$", re.IGNORECASE),
    re.compile(r"^(?P<version>\d+\.\d+\.\d+)-[0-9a-f]{8}$"),
    re.compile(r"^bottlerocket-aws-k8s-\d+\.\d+(?:-[a-z0-9]+)*-(?:x86_64|aarch64)-v(?P<version>\d+\.\d+\.\d+)"
               r"(?:-[0-9a-f]{8})?$"),
)
_LATEST = ("", "latest", "al2023@latest", "bottlerocket@latest")


def _first_match(forms: tuple[re.Pattern[str], ...], text: str, group: str) -> str | None:
    for form in forms:
        match = form.match(text)
        if match:
            return match.group(group)
    return None


def parse_image_version(os: str, value: str | None) -> str | None:
    """The canonical release tag of a pinned image version (`v20251209`, `v1.48.0`); None for latest.

    Accepts a Karpenter alias (`al2023@v20251209`, `bottlerocket@v1.48.0`), the bare tag, the EKS
    `releaseVersion` (`1.35.0-20251209`, `1.48.0-0b7d6d27`) and the AMI name. Raises ValueError naming the
    value and the forms it reads: a caller never guesses a release from a string it cannot read.
    """
    text = (value or "").strip()
    if text.lower() in _LATEST:
        return None
    if os == "al2023":
        found = _first_match(_AL2023_FORMS, text, "date")
        if found:
            return "v" + found
        raise ValueError(
            f"AL2023 image version {value!r} is not a release; use v20260917 (alias al2023@v20260917), the AMI "
            "release version 1.35.2-20260917, the AMI name amazon-eks-node-al2023-x86_64-nvidia-1.35-v20260917, "
            "or latest"
        )
    if os == "bottlerocket":
        found = _first_match(_BOTTLEROCKET_FORMS, text, "version")
        if found:
            return "v" + found
        raise ValueError(
            f"Bottlerocket image version {value!r} is not a release; use v1.68.0 (alias bottlerocket@v1.68.0), the "
            "EKS release version <version>-<8-hex build> (1.47.0-6154605b), the AMI name "
            "bottlerocket-aws-k8s-1.35-nvidia-x86_64-v<version>-<build>, or latest"
        )
    raise ValueError(f"OS {os!r} has no image releases: only {', '.join(BAKED_DRIVER_OS)} bake the driver")


def release_key(release: str) -> tuple[int, ...]:
    """Order of release tags: v20260917 -> (20260917,), v1.68.0 -> (1, 68, 0)."""
    return tuple(int(part) for part in release.lstrip("v").split("."))


def _release_date(os: str, release: str) -> date | None:
    """AL2023 tags are dates (v20260917); Bottlerocket tags are not."""
    if os != "al2023":
        return None
    digits = release.lstrip("v")
    try:
        return date(int(digits[:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:
        return None


class ImageQueries(NodeQueries):
    """Queries about what a node image release ships and which driver its nodes load."""

    def image_releases(self, os: str) -> list[ImageRelease]:
        """Recorded releases of one image line, oldest first."""
        return sorted((r for r in self.data.image_releases if r.os == os), key=lambda r: release_key(r.release))

    def _latest_release(self, os: str, today: date) -> ImageRelease | None:
        rows = self.image_releases(os)
        if not rows:
            return None
        newest = rows[-1]
        seen = newest.released or _release_date(os, newest.release) or newest.reviewed
        return newest if seen <= today else None

    def _pinned_step(self, os: str, release: str) -> tuple[ImageRelease | None, ImageRelease | None]:
        """The recorded row at or before `release`, and the first recorded row after it."""
        wanted = release_key(release)
        before = [r for r in self.image_releases(os) if release_key(r.release) <= wanted]
        after = [r for r in self.image_releases(os) if release_key(r.release) > wanted]
        return (before[-1] if before else None), (after[0] if after else None)

    def driver_for_image(
        self,
        os: str,
        image_version: str | None,
        instance_type: str | None,
        k8s_version: str,
        *,
        today: date | None = None,
        branch_pin: str | None = None,
    ) -> ImageDriver | None:
        """The driver a node of this image release, instance type and Kubernetes version loads.

        `image_version`: a pinned release (`v20260917`, `al2023@v20260917`, `v1.68.0`, ...) or None/`latest`
        (the newest release as of `today`). Returns None for an OS whose driver is not baked in (Ubuntu).
        Raises ValueError for an image version or Kubernetes version that does not parse.
        """
        if os not in BAKED_DRIVER_OS:
            return None
        today = today or date.today()
        minor = str(parse_kube_minor(k8s_version))
        pinned = parse_image_version(os, image_version)
        node_row = self._node_image_row(os)
        ever_published = node_row.published if node_row else ()
        if pinned is None:
            row, following = self._latest_release(os, today), None
            exact = row is not None
        else:
            row, following = self._pinned_step(os, pinned)
            exact = row is not None and row.release == pinned
        if row is None:
            return self._date_step_driver(os, pinned, minor, today, ever_published)
        versions = row.drivers.get(minor) or row.drivers.get("*") or ()
        published = self._published(row, following, minor, exact, ever_published, pinned=pinned is not None)
        where = f"{os} {row.release}" if exact else f"{os} {pinned} (recorded step: {row.release})"
        if not versions:
            return ImageDriver(
                os, pinned, row.release, exact, minor, published, self._published_set(row, ever_published),
                (), None, None, f"{where} carries no driver for Kubernetes {minor}", row.source,
                row.confirmed and exact,
            )
        version, rule = self._resolve(row, versions, instance_type, where, branch_pin)
        branch = parse_driver_version(version).branch if version is not None else None
        return ImageDriver(
            os, pinned, row.release, exact, minor, published, self._published_set(row, ever_published),
            versions, version, branch, rule, row.source, row.confirmed and exact, row.resolution,
        )

    @staticmethod
    def _star_versions(row: ImageRelease, ever_published: tuple[str, ...]) -> tuple[str, ...]:
        """The minors a `*` row publishes: its own `kubernetes` list when recorded, else every minor ever published."""
        return row.kubernetes if row.kubernetes is not None else ever_published

    @classmethod
    def _published_set(cls, row: ImageRelease, ever_published: tuple[str, ...]) -> tuple[str, ...]:
        listed = tuple(k for k in row.drivers if k != "*")
        if "*" not in row.drivers:
            return listed
        return tuple(sorted(set(listed) | set(cls._star_versions(row, ever_published)),
                            key=lambda v: tuple(int(p) for p in v.split("."))))

    @classmethod
    def _published(
        cls, row: ImageRelease, following: ImageRelease | None, minor: str, exact: bool, ever: tuple[str, ...],
        *, pinned: bool = True,
    ) -> bool | None:
        in_next = (following is None or minor in following.drivers
                   or ("*" in following.drivers and minor in cls._star_versions(following, ever)))
        if minor in row.drivers:
            # Between two recorded rows, a variant the next row no longer lists may be gone already.
            return True if exact or in_next else None
        if "*" in row.drivers:
            if minor in row.kubernetes_unconfirmed:
                return None  # listed, but no source read confirms the release publishes it
            if row.kubernetes is not None:
                # The release's own list: a pinned release publishes nothing outside it; an unpinned pool may get a
                # newer release than the newest recorded one, so a minor outside the list stays unknown there.
                return True if minor in row.kubernetes else (False if exact and pinned else None)
            return True if minor in ever else None
        if exact or following is None or not in_next:
            return False
        return None  # appears by the next recorded release; this release's own table is not recorded

    def _resolve(
        self, row: ImageRelease, versions: tuple[str, ...], instance_type: str | None, where: str,
        branch_pin: str | None = None,
    ) -> tuple[str | None, str]:
        listing = " and ".join(f"R{parse_driver_version(v).branch} ({v})" for v in versions)
        if len(versions) == 1:
            return versions[0], f"{where} ships one driver, {versions[0]}"
        if row.resolution == "undocumented":
            return None, f"{where} carries {listing}; no primary source says which one a node loads"
        if row.resolution == "bottlerocket-branch-setting" and branch_pin in row.branch_setting:
            pinned = row.branch_setting[branch_pin]
            return pinned, (f"{where} carries {listing}; settings.kernel.drivers.nvidia.branch = {branch_pin!r} "
                            f"activates {pinned} at boot whatever the GPU")
        inst = self.instance_type(instance_type) if instance_type else None
        first, second = versions[0], versions[1]
        if inst is None:
            return None, (
                f"{where} carries {listing} and picks one at first boot from the GPU: "
                f"R{parse_driver_version(second).branch} only for GPUs the R{parse_driver_version(first).branch} "
                f"open module list lacks ({', '.join(row.second_tree_gpus) or 'none recorded'}); "
                "give the instance type to know which"
            )
        return self._al2023_tree(row, inst, first, second, where)

    @staticmethod
    def _al2023_tree(
        row: ImageRelease, inst: InstanceType, first: str, second: str, where: str
    ) -> tuple[str, str]:
        lts, pb = parse_driver_version(first).branch, parse_driver_version(second).branch
        if inst.family in row.first_tree_families:
            return first, f"{where}: {inst.family} instances always load the R{lts} tree (proprietary, GSP off)"
        if inst.gpu_model in row.second_tree_gpus:
            return second, (
                f"{where}: the {inst.gpu_model} of {inst.name} is absent from R{lts}'s open supported-devices list "
                f"and present in R{pb}'s, so the node loads the R{pb} tree"
            )
        return first, f"{where}: the {inst.gpu_model} of {inst.name} loads the default R{lts} tree"

    def _date_step_driver(
        self, os: str, pinned: str | None, minor: str, today: date, ever_published: tuple[str, ...]
    ) -> ImageDriver | None:
        """Before the recorded releases: the date-based `baked_driver` step (AL2023 tags are dates)."""
        row = self._node_image_row(os)
        if row is None:
            return None
        when = _release_date(os, pinned) if pinned is not None else today
        step = self._baked_row(row, when, minor) if when is not None else None
        if step is None:
            return ImageDriver(
                os, pinned, None, False, minor, None, ever_published, (), None, None,
                f"no recorded {os} release or dated step covers {pinned or today.isoformat()}", row.source, False,
            )
        branch = str(step.branch)
        label = f"{os} {pinned}" if pinned else f"{os} NVIDIA images (as of {today.isoformat()})"
        return ImageDriver(
            os, pinned, None, False, minor, minor in ever_published, ever_published, (branch,), branch,
            step.branch, f"{label} ship driver branch R{branch}", step.source, step.confirmed,
        )

    def driver_branch_for_image(
        self,
        os: str,
        image_version: str | None,
        instance_type: str | None,
        kubernetes: str,
        *,
        today: date | None = None,
    ) -> int | None:
        """THE call for a pool that pins a node image: the NVIDIA driver branch its nodes load.

        `os`: al2023 or bottlerocket (None for Ubuntu: the operator installs the driver there).
        `image_version`: Karpenter alias (`al2023@v20260917`, `bottlerocket@v1.68.0`), bare tag, AL2023 AMI
        release version (`1.35.2-20260917`), or None / `latest` (the newest recorded release as of `today`).
        `instance_type`: decides between trees on releases with two (AL2023 >= v20260917); None gives the
        release's default tree. None also when no source tells (Bottlerocket 1.37 variants carry two drivers
        with no documented selection: see `driver_for_image(...).drivers`).
        Raises ValueError for an image version or Kubernetes version that does not parse.
        """
        today = today or date.today()
        image = self.driver_for_image(os, image_version, instance_type, kubernetes, today=today)
        if image is None or not image.drivers:
            return None
        if image.branch is not None:
            return image.branch
        if image.resolution == "undocumented":
            return None
        return parse_driver_version(image.drivers[0]).branch

    def baked_driver_branch(
        self,
        os: str,
        kubernetes: str,
        today: date,
        *,
        instance_type: str | None = None,
        image_version: str | None = None,
        branch_pin: str | None = None,
    ) -> int | None:
        """Driver branch a Bottlerocket/AL2023 NVIDIA node loads (the image's default one when it depends on
        the GPU and no instance type is given); None for Ubuntu or when no source tells. `branch_pin`: a
        Bottlerocket node's settings.kernel.drivers.nvidia.branch."""
        if os not in BAKED_DRIVER_OS:
            return None
        image = self.driver_for_image(os, image_version, instance_type, kubernetes, today=today,
                                      branch_pin=branch_pin)
        if image is None or not image.drivers:
            return None
        if image.branch is not None:
            return image.branch
        return parse_driver_version(image.drivers[0]).branch

    def image_findings(
        self,
        os: str,
        image_version: str | None,
        instance_type: str | None,
        kubernetes: str,
        *,
        driver: str | None = None,
        today: date | None = None,
        branch_pin: str | None = None,
    ) -> list[Finding]:
        """Is an image of this release published for the Kubernetes version (rule node-image-published), and
        is the declared driver the one its nodes load (rule baked-driver-branch)? `branch_pin`: a Bottlerocket
        pool's settings.kernel.drivers.nvidia.branch (lts / pb)."""
        today = today or date.today()
        image = self.driver_for_image(os, image_version, instance_type, kubernetes, today=today,
                                      branch_pin=branch_pin)
        if image is None:
            return []
        findings = ([self._published_finding(image, driver, instance_type, today, branch_pin)]
                    if image.release is not None else [])
        if driver is not None:
            findings.extend(self._branch_finding(image, driver, today, instance_type, branch_pin))
        return findings

    def _published_finding(
        self, image: ImageDriver, driver: str | None = None, instance_type: str | None = None,
        today: date | None = None, branch_pin: str | None = None,
    ) -> Finding:
        rule = "node-image-published"
        name = self._image_name(image)
        if image.published:
            caveat = "" if image.confirmed or not image.exact else " (unconfirmed: that release's table was not read)"
            return Finding("ok", rule, f"{name} is published in {image.os} {image.release}{caveat}", image.source)
        with_minor = [r.release for r in self.image_releases(image.os)
                      if image.kubernetes in r.drivers and image.kubernetes not in r.kubernetes_unconfirmed
                      and self._loads(r.release, image, driver, instance_type=instance_type, today=today,
                                      branch_pin=branch_pin)]
        nearest = tuple(reversed(with_minor[-3:]))
        published = ", ".join(image.published_versions) or "none recorded"
        row = next((r for r in self.image_releases(image.os) if r.release == image.release), None)
        if image.published is None and row is not None and image.kubernetes in row.kubernetes_unconfirmed:
            return Finding(
                "advisory",
                rule,
                f"whether {image.os} {image.release} publishes {name} is unconfirmed: no release note of "
                f"{image.release} read shows it. Pin a release whose notes do"
                f"{': ' + ', '.join(nearest) if nearest else ''}, or use a Kubernetes version it confirms.",
                image.source,
                nearest,
            )
        if image.published is None:
            asked = image.image_version or f"{image.release} (the newest recorded release)"
            return Finding(
                "advisory",
                rule,
                f"whether {image.os} {asked} publishes {name} is not recorded (its own table was not "
                f"read; the nearest recorded release {image.release} publishes {published}). Pin a recorded "
                f"release{': ' + ', '.join(nearest) if nearest else ''}.",
                image.source,
                nearest,
            )
        fix = (f"pin a release that does and loads the pool's driver ({', '.join(nearest)}), or "
               if nearest else "")
        return Finding(
            "mandatory",
            rule,
            f"{image.os} {image.image_version or image.release} publishes no {name} (published there: {published}); "
            f"{fix}run the pool's nodes on a Kubernetes version it publishes, within the kubelet skew of the control "
            "plane.",
            image.source,
            nearest,
        )

    def _loads(
        self, release: str, image: ImageDriver, driver: str | None, *, instance_type: str | None, today: date | None,
        branch_pin: str | None,
    ) -> bool:
        """Would a node of `release` load the declared driver's branch (a release to suggest pinning)?"""
        if driver is None:
            return True
        other = self.driver_for_image(image.os, release, instance_type, image.kubernetes, today=today,
                                      branch_pin=branch_pin)
        declared = parse_driver_version(driver).branch
        if other is None or not other.drivers:
            return False
        if other.branch is not None:
            return other.branch == declared
        return declared in {parse_driver_version(v).branch for v in other.drivers}

    @staticmethod
    def _image_name(image: ImageDriver) -> str:
        if image.os == "bottlerocket":
            return f"aws-k8s-{image.kubernetes}-nvidia variant"
        return f"AL2023 NVIDIA AMI for Kubernetes {image.kubernetes}"

    def _branch_setting_fix(
        self, image: ImageDriver, declared: int, instance_type: str | None = None, today: date | None = None
    ) -> str:
        """", set nvidiaDriverBranch: pb (settings.kernel.drivers.nvidia.branch), " where the release selects its
        driver by that setting and one of its values activates the declared branch, a branch the instance's GPU and
        family allow (pb loads R595, which g6f refuses); "" elsewhere."""
        if image.resolution != "bottlerocket-branch-setting" or image.release is None or len(image.drivers) < 2:
            return ""
        row = next((r for r in self.image_releases(image.os) if r.release == image.release), None)
        inst = self.instance_type(instance_type) if instance_type else None
        values = [value for value, version in (row.branch_setting.items() if row else ())
                  if parse_driver_version(version).branch == declared
                  and (inst is None or self.drives(inst, version, today))]
        if not values:
            return ""
        return (f"set the pool's nvidiaDriverBranch to {values[0]} (settings.kernel.drivers.nvidia.branch = "
                f"{values[0]!r}), ")

    def _unjudged_branch_pin(self, image: ImageDriver, declared: int, branch_pin: str | None) -> Finding | None:
        """A Bottlerocket branch pin on a variant whose recorded table lists one driver, in a release that selects
        the branch at boot: whether that variant carries the pinned branch's tree too is not recorded (v1.68.0's
        1.31-1.36 variants: its notes are reported to add selection there, the table lists one driver), so the
        declared branch is not judged, and the finding says so instead of refusing it."""
        row = next((r for r in self.image_releases(image.os) if r.release == image.release), None)
        if (row is None or row.resolution != "bottlerocket-branch-setting" or len(image.drivers) != 1
                or branch_pin not in row.branch_setting
                or parse_driver_version(row.branch_setting[branch_pin]).branch != declared):
            return None
        return Finding(
            "advisory",
            "baked-driver-branch",
            f"{image.rule}; whether its aws-k8s-{image.kubernetes}-nvidia variant also carries the {branch_pin} tree "
            f"(R{declared}, {row.branch_setting[branch_pin]}) that settings.kernel.drivers.nvidia.branch = "
            f"{branch_pin!r} selects is UNCONFIRMED (the release's table lists one driver for it), so driver "
            f"{declared} {UNJUDGED_MARK}. To have it judged, run the pool on a variant whose table lists both trees "
            f"({', '.join(k for k, v in row.drivers.items() if len(v) > 1) or 'none recorded'}), or declare driver "
            f"{image.branch}.",
            image.source,
            tuple(str(b) for b in (image.branch,) if b is not None),
        )

    def _undrivable(
        self, image: ImageDriver, baked: int, declared: int, instance_type: str | None, *, today: date, where: str,
        branch_pin: str | None = None,
    ) -> Finding | None:
        """The image loads a branch the instance's GPU does not run (R580 on a g7): declaring that branch is no fix
        (gpu-architecture-supported refuses it), so the finding names the releases that load the declared branch
        on this instance and Kubernetes version instead, or another OS where none does."""
        inst = self.instance_type(instance_type) if instance_type else None
        if inst is None or self.drives(inst, str(baked)):  # the GPU and family, whatever the branch's life
            return None
        loading = []
        for row in self.image_releases(image.os):
            try:
                other = self.driver_for_image(image.os, row.release, instance_type, image.kubernetes, today=today,
                                              branch_pin=branch_pin)
            except ValueError:
                continue
            if other is not None and other.branch == declared and other.published:
                loading.append(row.release)
        nearest = tuple(reversed(loading[-3:]))
        fix = (f"pin an image release whose nodes load R{declared} on it ({', '.join(nearest)})" if nearest
               else f"no recorded {image.os} release loads R{declared} on it for Kubernetes {image.kubernetes}: "
                    "use another Kubernetes version or OS")
        return Finding(
            "mandatory",
            "baked-driver-branch",
            f"{where}, not R{declared}, and R{baked} does not drive the {inst.gpu_model} of {inst.name}, so declaring "
            f"driver {baked} is no fix; {fix}.",
            image.source,
            nearest,
        )

    def _branch_finding(
        self, image: ImageDriver, driver: str, today: date, instance_type: str | None = None,
        branch_pin: str | None = None,
    ) -> list[Finding]:
        rule = "baked-driver-branch"
        declared = parse_driver_version(driver).branch
        if not image.drivers:
            return []
        if image.branch != declared and (unjudged := self._unjudged_branch_pin(image, declared, branch_pin)):
            return [unjudged]
        if image.branch is not None and image.branch != declared:
            where = (f"{image.os} NVIDIA images ship driver branch R{image.branch} (as of {today.isoformat()})"
                     if image.release is None else image.rule)
            if not self._branch_setting_fix(image, declared, instance_type, today) and (
                    undrivable := self._undrivable(image, image.branch, declared, instance_type, today=today,
                                                   where=where, branch_pin=branch_pin)):
                return [undrivable]
        if image.release is None:
            # The date-based steps: the message the matrix gave before releases were recorded.
            baked = image.branch
            if baked == declared:
                return [Finding("ok", rule, f"{image.os} NVIDIA images ship R{baked}", image.source)]
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{image.os} NVIDIA images ship driver branch R{baked} (as of {today.isoformat()}), "
                    f"not R{declared}; declare driver {baked} for this pool, or use Ubuntu with an operator-installed "
                    "driver.",
                    image.source,
                    (str(baked),),
                )
            ]
        branches = [parse_driver_version(v).branch for v in image.drivers]
        if image.branch is not None:
            if image.branch == declared:
                return [Finding("ok", rule, f"{image.rule}; R{declared} as declared", image.source)]
            setting = self._branch_setting_fix(image, declared, instance_type, today)
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{image.rule}, not R{declared}; declare driver {image.branch} for this pool, {setting}or pin "
                    "an image release whose driver it needs.",
                    image.source,
                    (str(image.branch),),
                )
            ]
        if declared in branches:
            caveat = (
                f"; a node whose GPU does not need it loads R{branches[0]}"
                if declared != branches[0]
                and image.resolution in ("al2023-open-supported-devices", "bottlerocket-branch-setting")
                else ""
            )
            return [Finding("advisory", rule, f"{image.rule}{caveat}", image.source, tuple(map(str, branches)))]
        return [
            Finding(
                "mandatory",
                rule,
                f"{image.rule}; R{declared} is not among them. Declare driver "
                f"{' or '.join(map(str, branches))} for this pool.",
                image.source,
                tuple(map(str, branches)),
            )
        ]
