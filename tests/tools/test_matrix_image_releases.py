"""`tools.matrix refresh --fetch` reads the node image release notes (issue 17, "Staying true"): the
awslabs/amazon-eks-ami CHANGELOG for AL2023 and Bottlerocket's CHANGELOG plus its per-release GPU driver tables.

The files served here are small fixtures written for these tests in the shape of the real ones:
- https://github.com/awslabs/amazon-eks-ami/blob/main/CHANGELOG.md: `# AMI Release vYYYYMMDD`, then per
  `<summary><b>Kubernetes 1.NN</b></summary>` a package table with an `AL2023_x86_64_NVIDIA` column and
  `colspan` cells (layout of release v20260714);
- https://github.com/bottlerocket-os/bottlerocket/blob/develop/CHANGELOG.md: `# v1.26.1 (2024-10-24)` headings;
- https://bottlerocket.dev/en/os/1.68.x/version-information/gpu-drivers/1.68.0/: Variant | Kernel Version |
  NVIDIA Driver Version, as bottlerocket-project-website layouts/shortcodes/nvidia-versions.html renders it.
Each test shows that one fact of issue 17 (1: the AL2023 two-tree step v20260917; 4: the Bottlerocket variants
per release) would have been caught by the fetch.
"""

from __future__ import annotations

from pathlib import Path

from policies.gpu_guard.matrix import MATRIX_PATH, parse_matrix
from tests.tools.test_matrix_cli import _docs_and_ci, _require_upstream, _serve_files
from tests.tools.test_matrix_image_env import registry_files, serve
from tools.matrix.cli import main
from tools.matrix.image_releases import (
    parse_bottlerocket_changelog,
    parse_bottlerocket_drivers,
    parse_eks_ami_changelog,
)

TODAY = ["--today", "2026-11-30"]
AMI_TYPES = ("AL2023_x86_64_NVIDIA", "AL2023_x86_64_NEURON", "AL2023_x86_64_STANDARD", "AL2023_ARM_64_NVIDIA",
             "AL2023_ARM_64_STANDARD")


def package_row(name: str, *cells: tuple[int, str]) -> str:
    tds = "".join(f'\n      <td colspan="{span}">{value}</td>' for span, value in cells)
    return f"    <tr>\n      <td>{name}</td>{tds}\n    </tr>\n"


def kubernetes_section(minor: str, release: str, kmod: dict[str, str]) -> str:
    """One `<details>` of an eks-ami release: AMI names, then packages; `kmod` maps package name -> version."""
    header = "".join(f"\n      <th>{t}</th>" for t in AMI_TYPES)
    rows = package_row("containerd", (5, "2.2.4-1.amzn2023.0.3"))
    for name, version in kmod.items():
        rows += package_row(name, (1, f"{version}-1.amzn2023"), (2, "—"), (1, f"{version}-1.el9"), (1, "—"))
    rows += package_row("runc", (5, "1.3.5-1.amzn2023.0.2"))
    return (
        f"<details>\n<summary><b>Kubernetes {minor}</b></summary>\n  <table>\n    <tr>\n      <th>AMI Names</th>\n"
        f"      <th>Release version</th>\n    <tr>\n      <td>amazon-eks-node-al2023-x86_64-nvidia-{minor}-{release}"
        f"</td>\n      <td>{minor}.2-{release[1:]}</td>\n    </tr>\n  </table>\n  <table>\n    <tr>\n"
        f"      <th>Package</th>{header}\n    </tr>\n{rows}  </table>\n</details>\n"
    )


def eks_ami_entry(release: str, minors: list[str], kmod: dict[str, str]) -> str:
    sections = "\n".join(kubernetes_section(m, release, kmod) for m in reversed(minors))
    notes = "## What's Changed\n* a change\n\n---\n\n<h2>AMI Details</h2>"
    return f"# AMI Release {release}\n\n{notes}\n\n{sections}\n---\n"


AL2023_MINORS = ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]
BEFORE = eks_ami_entry("v20260714", AL2023_MINORS, {"kmod-nvidia-latest-dkms": "580.159.03"})
# The two-tree release of PR #2819: an LTS and a PB kmod package (names as a fixture; the step is what counts).
TWO_TREES = eks_ami_entry(
    "v20260917", AL2023_MINORS, {"kmod-nvidia-latest-dkms": "580.173.02", "kmod-nvidia-pb-dkms": "595.91.07"}
)


def eks_ami_changelog(*entries: str) -> bytes:
    return ("# Changelog\n\n<!--new-changelog-entry-placeholder-->\n\n" + "\n".join(entries)).encode()


def bottlerocket_changelog(*releases: tuple[str, str]) -> bytes:
    return "".join(f"# {r} ({day})\n\n## Release Highlights\n* a change\n\n" for r, day in releases).encode()


def bottlerocket_page(drivers: dict[str, list[str]], *, fips: bool = True) -> bytes:
    rows = ""
    for minor, versions in drivers.items():
        for suffix in ("", "-fips") if fips else ("",):
            rows += (f"        <tr>\n            <td><code>aws-k8s-{minor}-nvidia{suffix}</code></td>\n"
                     f"            <td>6.12</td>\n            <td>{', '.join(versions)}</td>\n        </tr>\n")
    rows += "        <tr>\n            <td><code>aws-ecs-2-nvidia</code></td>\n            <td>6.1</td>\n"
    rows += "            <td>570.172.08</td>\n        </tr>\n"
    return (f"<table>\n    <thead>\n        <tr>\n            <th scope=\"col\">Variant</th>\n        </tr>\n"
            f"    </thead>\n    <tbody>\n{rows}    </tbody>\n</table>\n").encode()


def recorded_bottlerocket(text: str) -> dict[str, bytes]:
    """A page per confirmed Bottlerocket row of `text` (a matrix.yaml) that says what the row says."""
    data = parse_matrix(text)
    pages = {}
    for row in data.image_releases:
        if row.os == "bottlerocket" and row.confirmed:
            number = row.release[1:]
            line = ".".join(number.split(".")[:2]) + ".x"
            path = f"/br/docs/{line}/version-information/gpu-drivers/{number}/"
            pages[path] = bottlerocket_page({m: list(v) for m, v in row.drivers.items()})
    return pages


def refresh(tmp_path: Path, matrix_text: str, files: dict[str, bytes]) -> int:
    """`refresh --fetch` over a matrix file, NVIDIA's docs and CI (the snapshots), an empty driver registry,
    and `files` for the release notes; --no-images (the image environments have their own tests)."""
    upstream = _require_upstream()
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(matrix_text, encoding="utf-8")
    with serve(registry_files({})) as (registry, _), _serve_files({**_docs_and_ci(upstream), **files}) as (url, _):
        return main(["refresh", "--fetch", "--matrix", str(matrix), "--docs-url", f"{url}/gpu-operator",
                     "--ci-url", f"{url}/ci/.common-ci.yml", "--registry", registry, "--no-images", "--timeout", "5",
                     "--eks-ami-changelog-url", f"{url}/eks/CHANGELOG.md",
                     "--bottlerocket-changelog-url", f"{url}/br/CHANGELOG.md",
                     "--bottlerocket-docs-url", f"{url}/br/docs", *TODAY])


def run(tmp_path: Path, capsys, matrix_text: str, files: dict[str, bytes]) -> tuple[int, str]:
    code = refresh(tmp_path, matrix_text, files)
    return code, capsys.readouterr().out


MATRIX = MATRIX_PATH.read_text(encoding="utf-8")
BR_RELEASES = (("v1.68.0", "2026-11-12"), ("v1.66.0", "2026-10-15"), ("v1.65.0", "2026-10-01"))


def files(eks: bytes, matrix_text: str = MATRIX, **extra: bytes) -> dict[str, bytes]:
    return {"/eks/CHANGELOG.md": eks, "/br/CHANGELOG.md": bottlerocket_changelog(*BR_RELEASES),
            **recorded_bottlerocket(matrix_text), **extra}


def block(text: str, start: str, end: str) -> str:
    first = text.index(start)
    return text[first : text.index(end, first)]


# --- the parsers, on the shapes of the real files ------------------------------------------------------------


def test_eks_ami_changelog_gives_the_nvidia_column_per_kubernetes_version():
    releases = parse_eks_ami_changelog(eks_ami_changelog(TWO_TREES, BEFORE).decode())
    assert sorted(releases) == ["v20260714", "v20260917"]
    assert releases["v20260714"] == dict.fromkeys(AL2023_MINORS, ("580.159.03",))
    # The ARM column (el9 build) and the NEURON/STANDARD dashes are not the x86_64 NVIDIA AMI's drivers.
    assert releases["v20260917"]["1.35"] == ("580.173.02", "595.91.07")


def test_bottlerocket_table_reads_the_k8s_nvidia_variants_only():
    page = bottlerocket_page({"1.36": ["580.178.04"], "1.37": ["580.178.04", "595.91.07"]}).decode()
    assert parse_bottlerocket_drivers(page) == {"1.36": ("580.178.04",), "1.37": ("580.178.04", "595.91.07")}
    changelog = bottlerocket_changelog(*BR_RELEASES).decode()
    assert sorted(parse_bottlerocket_changelog(changelog)) == ["v1.65.0", "v1.66.0", "v1.68.0"]


# --- through the command line ----------------------------------------------------------------------------


def test_fetch_agrees_when_the_release_notes_say_what_the_matrix_says(tmp_path, capsys):
    code, out = run(tmp_path, capsys, MATRIX, files(eks_ami_changelog(TWO_TREES, BEFORE)))
    assert code == 0, out
    assert "agrees with upstream" in out and "/eks/CHANGELOG.md" in out


def test_fact_1_a_matrix_without_the_two_tree_step_is_caught(tmp_path, capsys):
    """Issue 17 fact 1: the matrix ended at v20260714 (R580 only); the CHANGELOG's v20260917 entry bakes two
    trees. The fetch names the missing release row with both drivers."""
    lacking = MATRIX.replace(block(MATRIX, "  - os: al2023\n    release: v20260917\n", "  - {os: bottlerocket"), "")
    code, out = run(tmp_path, capsys, lacking, files(eks_ami_changelog(TWO_TREES, BEFORE), lacking))
    assert code == 1, out
    assert "1 difference(s)" in out
    assert ("image_releases[al2023 v20260917].row: matrix.yaml (none); upstream {1.36: [580.173.02, 595.91.07], "
            "1.35: [580.173.02, 595.91.07],") in out


def test_fact_1_a_recorded_release_whose_drivers_changed_is_caught(tmp_path, capsys):
    """A recorded row that no longer says what its release notes say (v20260714 listed with R595 only)."""
    entry = eks_ami_entry("v20260714", AL2023_MINORS, {"kmod-nvidia-latest-dkms": "595.71.05"})
    code, out = run(tmp_path, capsys, MATRIX, files(eks_ami_changelog(TWO_TREES, entry)))
    assert code == 1, out
    assert ("image_releases[al2023 v20260714].drivers: matrix.yaml {1.30: [580.159.03], 1.31: [580.159.03], "
            "1.32: [580.159.03], 1.33: [580.159.03], 1.34: [580.159.03], 1.35: [580.159.03], 1.36: [580.159.03]}; "
            "upstream {1.36: [595.71.05],") in out


def test_fact_4_variants_per_bottlerocket_release_are_caught(tmp_path, capsys):
    """Issue 17 fact 4: the matrix without the 1.66/1.68 rows judges them by v1.65.0 (1.31-1.36, R580 only); the
    1.66.0 and 1.68.0 tables list aws-k8s-1.37-nvidia with 580.178.04 and 595.91.07 and no 1.30."""
    lacking = MATRIX.replace(block(MATRIX, "  - os: bottlerocket\n    release: v1.66.0\n", "\n# --- EKS"), "\n")
    newer = {key: ["580.178.04"] for key in ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]}
    newer["1.37"] = ["580.178.04", "595.91.07"]
    pages = {f"/br/docs/{line}/version-information/gpu-drivers/{number}/": bottlerocket_page(newer)
             for line, number in (("1.66.x", "1.66.0"), ("1.68.x", "1.68.0"))}
    code, out = run(tmp_path, capsys, lacking, files(eks_ami_changelog(TWO_TREES, BEFORE), lacking, **pages))
    assert code == 1, out
    assert "2 difference(s)" in out
    for release in ("v1.66.0", "v1.68.0"):
        assert (f"image_releases[bottlerocket {release}].row: matrix.yaml (none); upstream {{1.31: [580.178.04], "
                "1.32: [580.178.04], 1.33: [580.178.04], 1.34: [580.178.04], 1.35: [580.178.04], 1.36: [580.178.04], "
                "1.37: [580.178.04, 595.91.07]}") in out


def test_fact_4_a_release_that_removed_variants_is_caught(tmp_path, capsys):
    """Release v1.58.0 removed the aws-k8s-1.29 variants (PR #4797): a 1.58.0 row still listing 1.29 is
    reported once the 1.58.0 table can be read."""
    row = block(MATRIX, "  - os: bottlerocket\n    release: v1.58.0\n", "  - {os: bottlerocket, release: v1.62.0")
    stale = MATRIX.replace(row, row.replace('drivers: {"1.30": ["580"]', 'drivers: {"1.29": ["580"], "1.30": ["580"]'))
    page = bottlerocket_page({key: ["580.126.09"] for key in ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"]})
    code, out = run(tmp_path, capsys, stale, files(eks_ami_changelog(TWO_TREES, BEFORE), stale, **{
        "/br/docs/1.58.x/version-information/gpu-drivers/1.58.0/": page}))
    assert code == 1, out
    assert ("image_releases[bottlerocket v1.58.0].drivers: matrix.yaml {1.29: [580], 1.30: [580], 1.31: [580], "
            "1.32: [580], 1.33: [580], 1.34: [580], 1.35: [580]}; upstream {1.30: [580.126.09],") in out


def test_unconfirmed_rows_whose_table_is_not_published_are_skipped_and_say_why(tmp_path, capsys):
    """No fetchable source holds the 1.58.0 and 1.66.0 tables here: their rows carry confirmed: false and a
    reason, and their pages answering 404 is no error; a confirmed row's missing page is."""
    data = parse_matrix(MATRIX)
    unconfirmed = {r.release: r.note for r in data.image_releases if r.os == "bottlerocket" and not r.confirmed}
    assert set(unconfirmed) == {"v1.58.0", "v1.66.0"}
    assert all(note and "not" in note for note in unconfirmed.values())
    served = files(eks_ami_changelog(TWO_TREES, BEFORE))
    del served["/br/docs/1.68.x/version-information/gpu-drivers/1.68.0/"]
    code = refresh(tmp_path, MATRIX, served)
    err = capsys.readouterr().err
    assert code == 2
    assert "gpu-drivers/1.68.0/: HTTP 404" in err and "--no-image-releases" in err


def test_no_image_releases_skips_the_release_notes(tmp_path, capsys):
    code = refresh(tmp_path, MATRIX, {})  # without the flag, an absent CHANGELOG is an error
    assert code == 2
    assert "eks/CHANGELOG.md: HTTP 404" in capsys.readouterr().err
    upstream = _require_upstream()
    with serve(registry_files({})) as (registry, _), _serve_files(_docs_and_ci(upstream)) as (url, seen):
        code = main(["refresh", "--fetch", "--docs-url", f"{url}/gpu-operator", "--ci-url", f"{url}/ci/.common-ci.yml",
                     "--registry", registry, "--no-images", "--no-image-releases", "--timeout", "5", *TODAY])
    assert code == 0, capsys.readouterr()
    assert not [line for line in seen if "CHANGELOG" in line]
