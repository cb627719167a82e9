"""`refresh --fetch` for the node image releases: what each AL2023 NVIDIA AMI / Bottlerocket NVIDIA release ships.

Two sources, read live and compared with the `image_releases` rows of matrix.yaml:

- AL2023: awslabs/amazon-eks-ami `CHANGELOG.md` (https://github.com/awslabs/amazon-eks-ami/blob/main/CHANGELOG.md).
  Each `# AMI Release vYYYYMMDD` entry holds, per `<summary><b>Kubernetes 1.NN</b></summary>`, an HTML package
  table whose columns are AMI types; the `kmod-nvidia*` rows of the `AL2023_x86_64_NVIDIA` column are the driver
  trees baked in (`580.159.03-1.amzn2023`). A release with two trees (v20260917, PR #2819) has two such values.
- Bottlerocket: the release list of bottlerocket-os/bottlerocket `CHANGELOG.md` (`# v1.68.0 (2026-11-..)`,
  https://github.com/bottlerocket-os/bottlerocket/blob/develop/CHANGELOG.md) and, per release, the "GPU Driver
  Versions" page of bottlerocket.dev (https://bottlerocket.dev/en/os/1.68.x/version-information/gpu-drivers/1.68.0/):
  a table of Variant | Kernel Version | NVIDIA Driver Version rendered by the site's `nvidia-versions` shortcode
  (bottlerocket-os/bottlerocket-project-website layouts/shortcodes/nvidia-versions.html).

A release is judged the way the pack judges a pinned image: by its own row when recorded, else by the newest
recorded row before it (a step). A difference is a recorded row whose drivers or published Kubernetes versions
differ from the release's, or an unrecorded release that the step before it misdescribes (a step is missing).
Bare branches in a row (`580`) match any version of that branch; `*` matches every published version.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from datetime import date

from policies.gpu_guard.matrix import MatrixData
from policies.gpu_guard.matrix.images import release_key
from policies.gpu_guard.matrix.rows import ImageRelease
from tools.matrix.nvidia_upstream import UpstreamError
from tools.matrix.refresh import Difference, get_text

EKS_AMI_CHANGELOG = "https://raw.githubusercontent.com/awslabs/amazon-eks-ami/main/CHANGELOG.md"
BOTTLEROCKET_CHANGELOG = "https://raw.githubusercontent.com/bottlerocket-os/bottlerocket/develop/CHANGELOG.md"
BOTTLEROCKET_DOCS = "https://bottlerocket.dev/en/os"
AL2023_COLUMN = "AL2023_x86_64_NVIDIA"

Drivers = dict[str, tuple[str, ...]]
# (url, missing_ok) -> the text, or None when missing_ok and the server answers 404.
Getter = Callable[[str, bool], "str | None"]

_AL2023_RELEASE = re.compile(r"^#\s+AMI Release (v\d{8})\s*$", re.MULTILINE)
_KUBERNETES = re.compile(r"<summary>\s*<b>\s*Kubernetes (\d+\.\d+)\s*</b>\s*</summary>(.*?)</details>", re.DOTALL)
_ROW = re.compile(r"<tr>(.*?)(?=<tr>|</table>)", re.DOTALL)
_CELL = re.compile(r"<t([hd])([^>]*)>(.*?)</t[hd]>", re.DOTALL)
_COLSPAN = re.compile(r"colspan\s*=\s*\"?(\d+)")
_VERSION = re.compile(r"\b(\d{3}\.\d{2,3}(?:\.\d{2,3})?)\b")
_BOTTLEROCKET_RELEASE = re.compile(r"^#\s+(v\d+\.\d+\.\d+)\s+\((\d{4}-\d{2}-\d{2})\)", re.MULTILINE)
_VARIANT = re.compile(r"^aws-k8s-(\d+\.\d+)-nvidia$")


def _text(cell: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def _cells(row: str) -> list[tuple[str, str]]:
    """(kind h|d, text) of each cell, a `colspan="n"` cell repeated n times."""
    out = []
    for kind, attrs, body in _CELL.findall(row):
        span = _COLSPAN.search(attrs)
        out.extend([(kind, _text(body))] * (int(span.group(1)) if span else 1))
    return out


def _by_version(versions: list[str]) -> tuple[str, ...]:
    return tuple(sorted(set(versions), key=lambda v: tuple(int(p) for p in v.split("."))))


def parse_eks_ami_changelog(text: str) -> dict[str, Drivers]:
    """Release -> Kubernetes minor -> the NVIDIA driver versions of its AL2023 x86_64 NVIDIA AMI, oldest first.

    Entries without the per-Kubernetes HTML tables (releases before the AL2023 layout) are left out; so is a
    Kubernetes version whose table has no `kmod-nvidia*` value in the AL2023_x86_64_NVIDIA column.
    """
    found: dict[str, Drivers] = {}
    heads = list(_AL2023_RELEASE.finditer(text))
    for number, head in enumerate(heads):
        end = heads[number + 1].start() if number + 1 < len(heads) else len(text)
        drivers: Drivers = {}
        for minor, body in _KUBERNETES.findall(text[head.end() : end]):
            versions: list[str] = []
            column: int | None = None
            for row in _ROW.findall(body):
                cells = _cells(row)
                if cells and all(kind == "h" for kind, _ in cells):
                    names = [name for _, name in cells]
                    column = names.index(AL2023_COLUMN) if AL2023_COLUMN in names else None
                elif column is not None and cells and cells[0][1].startswith("kmod-nvidia") and column < len(cells):
                    versions.extend(_VERSION.findall(cells[column][1]))
            if versions:
                drivers[minor] = _by_version(versions)
        if drivers:
            found[head.group(1)] = drivers
    return found


def parse_bottlerocket_changelog(text: str) -> dict[str, date]:
    """Release -> publication date, from the `# v1.68.0 (2026-11-12)` headings."""
    return {m.group(1): date.fromisoformat(m.group(2)) for m in _BOTTLEROCKET_RELEASE.finditer(text)}


def parse_bottlerocket_drivers(text: str) -> Drivers:
    """Kubernetes minor -> drivers of each `aws-k8s-<minor>-nvidia` row of a GPU Driver Versions page.

    The FIPS twins (`-nvidia-fips`) and the ECS variants are not Kubernetes node images of their own here.
    """
    drivers: Drivers = {}
    for row in re.findall(r"<tr>(.*?)</tr>", text, re.DOTALL):
        cells = [name for kind, name in _cells(row) if kind == "d"]
        match = _VARIANT.match(cells[0]) if cells else None
        if match and len(cells) >= 3:
            versions = _VERSION.findall(" ".join(cells[2:]))
            if versions:
                drivers[match.group(1)] = tuple(dict.fromkeys(versions))
    return drivers


def bottlerocket_page(docs_base: str, release: str) -> str:
    """The GPU Driver Versions page of a release: <base>/1.68.x/version-information/gpu-drivers/1.68.0/."""
    number = release.lstrip("v")
    line = ".".join(number.split(".")[:2]) + ".x"
    return f"{docs_base.rstrip('/')}/{line}/version-information/gpu-drivers/{number}/"


def _fits(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """A row's drivers against upstream's: a bare branch (580) matches any version of it, in order."""
    if len(mine) != len(theirs):
        return False
    return all(m == t if "." in m else t.split(".")[0] == m for m, t in zip(mine, theirs, strict=True))


def drivers_fit(mine: Mapping[str, tuple[str, ...]], theirs: Drivers) -> bool:
    """Whether a row's `drivers` describes an upstream release (same Kubernetes versions, same drivers)."""
    if "*" in mine:
        return bool(theirs) and all(_fits(tuple(mine["*"]), versions) for versions in theirs.values())
    if set(mine) != set(theirs):
        return False
    return all(_fits(tuple(mine[minor]), theirs[minor]) for minor in theirs)


def release_differences(
    rows: list[ImageRelease], upstream: Mapping[str, Drivers]
) -> list[tuple[str, str, object, Drivers]]:
    """(release, field, matrix value, upstream drivers) for each release the recorded steps misdescribe.

    Only releases from the oldest recorded row on are judged (older ones were never modelled).
    """
    steps = sorted(rows, key=lambda r: release_key(r.release))
    if not steps:
        return []
    oldest = release_key(steps[0].release)
    found: list[tuple[str, str, object, Drivers]] = []
    for release in sorted(upstream, key=release_key):
        if release_key(release) < oldest:
            continue
        step = [r for r in steps if release_key(r.release) <= release_key(release)][-1]
        theirs = upstream[release]
        if drivers_fit(step.drivers, theirs):
            continue
        mine = {minor: list(versions) for minor, versions in step.drivers.items()}
        if step.release == release:
            found.append((release, "drivers", mine, theirs))
        else:
            found.append((release, "row", None, theirs))
    return found


def read_al2023(get: Getter, url: str = EKS_AMI_CHANGELOG) -> dict[str, Drivers]:
    """Every AL2023 release of the live CHANGELOG with its drivers."""
    found = parse_eks_ami_changelog(get(url, False) or "")
    if not found:
        raise UpstreamError(f"{url}: no AMI release with a {AL2023_COLUMN} kmod-nvidia package row")
    return found


def read_bottlerocket(
    get: Getter, rows: list[ImageRelease], *, changelog_url: str = BOTTLEROCKET_CHANGELOG,
    docs_base: str = BOTTLEROCKET_DOCS,
) -> dict[str, Drivers]:
    """The driver table of each recorded Bottlerocket release and of each release the CHANGELOG lists after them.

    A release whose page is not published (404) is skipped when its row is unconfirmed or it is not recorded
    yet (the site publishes a table some days after the release); a confirmed row's page must answer.
    """
    releases = parse_bottlerocket_changelog(get(changelog_url, False) or "")
    if not releases:
        raise UpstreamError(f"{changelog_url}: no `# vX.Y.Z (YYYY-MM-DD)` release heading")
    newest = max((release_key(r.release) for r in rows), default=(0,))
    confirmed = {r.release: r.confirmed for r in rows}
    wanted = sorted({*confirmed, *(r for r in releases if release_key(r) > newest)}, key=release_key)
    found: dict[str, Drivers] = {}
    for release in wanted:
        page = get(bottlerocket_page(docs_base, release), not confirmed.get(release, False))
        drivers = parse_bottlerocket_drivers(page) if page is not None else {}
        if page is not None and not drivers and confirmed.get(release, False):
            raise UpstreamError(f"{bottlerocket_page(docs_base, release)}: no aws-k8s-*-nvidia row in the table")
        if drivers:
            found[release] = drivers
    return found


def image_release_differences(
    data: MatrixData,
    *,
    timeout_s: float = 20.0,
    eks_ami_changelog: str = EKS_AMI_CHANGELOG,
    bottlerocket_changelog: str = BOTTLEROCKET_CHANGELOG,
    bottlerocket_docs: str = BOTTLEROCKET_DOCS,
) -> list[Difference]:
    """Every `image_releases[<os> <release>]` difference between matrix.yaml and the live release notes.

    Not writable: a human writes a release row (its resolution rule and note come from reading the release).
    """

    def get(url: str, missing_ok: bool) -> str | None:
        return get_text(url, timeout_s, missing_ok=missing_ok)

    found: list[Difference] = []
    for os in ("al2023", "bottlerocket"):
        rows = [r for r in data.image_releases if r.os == os]
        if os == "al2023":
            upstream = read_al2023(get, eks_ami_changelog)
        else:
            upstream = read_bottlerocket(
                get, rows, changelog_url=bottlerocket_changelog, docs_base=bottlerocket_docs
            )
        for release, field, mine, theirs in release_differences(rows, upstream):
            shown = {minor: list(versions) for minor, versions in theirs.items()}
            found.append(Difference("image_releases", f"{os} {release}", field, mine, shown, writable=False))
    return found
