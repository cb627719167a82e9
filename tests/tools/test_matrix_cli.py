"""`python -m tools.matrix`: verdicts, sources, nearest choices, JSON, and exit codes 0 / 1 / 2.

Most tests call `main()` in-process (fast); a few run the real module with the venv python from the
repository root, as CONFIG.md section 3 documents it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from policies.gpu_guard.matrix import MATRIX_PATH, parse_matrix
from policies.gpu_guard.registry import list_tags
from tests.policies.conftest_registry import fake_server, run_registry, silent_server
from tests.shared import upstream as upstream_file
from tools.matrix.cli import main

REPO = Path(__file__).resolve().parents[2]
TODAY = ["--today", "2026-11-29"]


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.matrix", *args], cwd=REPO, capture_output=True, text=True, check=False
    )


def test_check_compatible_combination_exits_0_as_a_module():
    result = run_module("check", "--os", "ubuntu-24.04", "--driver", "580.173.02", "--operator", "v26.7.0", *TODAY)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("verdict: COMPATIBLE")
    assert "source: https://" in result.stdout


def test_check_rejects_driver_535_15_04_with_exit_1_as_a_module():
    result = run_module("check", "--os", "ubuntu-22.04", "--driver", "535.15.04", "--operator", "v26.3.1", *TODAY)
    assert result.returncode == 1
    assert result.stdout.startswith("verdict: INCOMPATIBLE")
    assert "[mandatory] driver-image-published" in result.stdout
    assert "nvcr.io/nvidia/driver:535.15.04-ubuntu22.04" in result.stdout
    # R535 reached its end of life in June 2026: the nearest published live versions, never an R535 one (issue 39),
    # and only those GPU Operator v26.3.1 lists (issue 46: 580.178.04 and the other 580s are not in its list)
    assert "nearest valid: 580.173.02, 595.71.05\n" in result.stdout


def test_bad_os_prints_one_error_line_and_exits_2_as_a_module():
    result = run_module("check", "--os", "ubuntu-20.04", "--driver", "580.173.02")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: --os 'ubuntu-20.04' is not a node OS; choose one of ubuntu-22.04")


def test_eol_advisory_still_exits_0_and_names_the_advisory(capsys):
    code = main(
        [
            "check",
            "--os",
            "ubuntu-22.04",
            "--driver",
            "535.309.01",
            "--operator",
            "v26.3.1",
            "--cuda",
            "12.2.2",
            "--instance-type",
            "g5.xlarge",
            *TODAY,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    # no --kubernetes: compatible for the checks run only (issue 46)
    assert out.splitlines()[0].startswith("verdict: COMPATIBLE (with advisories) for the checks run: ")
    assert "[advisory] driver-branch-eol: R535 reached end of life in June 2026" in out


def test_r535_on_ubuntu_24_04_exits_1(capsys):
    code = main(["check", "--os", "ubuntu-24.04", "--driver", "535.309.01", "--operator", "v26.3.1", *TODAY])
    out = capsys.readouterr().out
    assert code == 1
    assert "[mandatory] driver-branch-supported" in out
    assert "Ubuntu 24.04 needs R570/R580 or newer" in out


def test_check_json_has_verdict_findings_sources_and_nearest(capsys):
    code = main(
        [
            "check",
            "--os",
            "ubuntu-22.04",
            "--driver",
            "535.15.04",
            "--operator",
            "v26.3.1",
            "--kubernetes",
            "1.34",
            "--kubelet",
            "1.32",
            "--json",
            *TODAY,
        ]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["verdict"] == "incompatible"
    assert document["level"] == "mandatory"
    assert document["input"]["kubelet"] == "1.32"
    image = next(f for f in document["findings"] if f["rule"] == "driver-image-published")
    assert image["level"] == "mandatory"
    assert image["nearest"][0] == "580.173.02"  # R535 ended (2026-06); 580.178.04 is not in v26.3.1's list
    assert all(f["source"].startswith("https://") for f in document["findings"])


def test_check_with_a_cuda_13_image_on_r535_is_advisory(capsys):
    code = main(
        [
            "check",
            "--os",
            "ubuntu-22.04",
            "--driver",
            "535.309.01",
            "--operator",
            "v26.3.1",
            "--instance-type",
            "p4d.24xlarge",
            "--cuda",
            "nvidia/cuda:13.0.0-runtime-ubuntu22.04",
            "--json",
            *TODAY,
        ]
    )
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    cuda = next(f for f in document["findings"] if f["rule"] == "cuda-driver-compatible")
    assert cuda["level"] == "advisory"


def test_kubelet_newer_than_control_plane_exits_1(capsys):
    code = main(
        [
            "check",
            "--os",
            "ubuntu-24.04",
            "--driver",
            "580.173.02",
            "--operator",
            "v26.7.0",
            "--kubernetes",
            "1.35",
            "--kubelet",
            "1.36",
            *TODAY,
        ]
    )
    assert code == 1
    assert "[mandatory] kubelet-version-skew" in capsys.readouterr().out


def test_drivers_lists_fitting_versions_newest_first(capsys):
    code = main(["drivers", "--os", "ubuntu-24.04", "--operator", "v26.7.0", "--instance-type", "p3.2xlarge", *TODAY])
    out = capsys.readouterr().out
    assert code == 0
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert listed == ["580.173.02"]


def test_drivers_json_marks_the_default_and_eol_notes(capsys):
    code = main(["drivers", "--os", "ubuntu-22.04", "--operator", "v26.7.0", "--json", *TODAY])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    versions = [row["version"] for row in document["drivers"]]
    assert versions == ["595.91.07", "580.173.02", "610.57.04", "535.309.01"]  # ended branches last (issue 46)
    default = next(row for row in document["drivers"] if row["default"])
    assert default["version"] == "595.91.07"
    r535 = next(row for row in document["drivers"] if row["version"] == "535.309.01")
    assert "end of life in June 2026" in r535["notes"][0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--os", "ubuntu-22.04"], "Missing option '--driver'"),
        (["check", "--os", "ubuntu-22.04", "--driver", "abc"], "--driver: driver version 'abc' is not an NVIDIA"),
        (
            ["check", "--os", "ubuntu-22.04", "--driver", "580.173.02", "--operator", "v9.9.9"],
            "--operator 'v9.9.9': GPU Operator v9.9.9 is older than every release the matrix records",
        ),
        (
            ["check", "--os", "ubuntu-22.04", "--driver", "580.173.02", "--instance-type", "m5.large"],
            "--instance-type 'm5.large' is not a known GPU instance type",
        ),
        (["check", "--os", "ubuntu-22.04", "--driver", "580.173.02", "--cuda", "twelve"], "--cuda: CUDA version"),
        (
            ["check", "--os", "ubuntu-22.04", "--driver", "580.173.02", "--kubelet", "1.32"],
            "--kubelet needs --kubernetes",
        ),
        (["check", "--os", "ubuntu-22.04", "--driver", "580.173.02", "--today", "tomorrow"], "--today 'tomorrow'"),
        (["drivers", "--os", "windows", "--operator", "v26.7.0"], "--os 'windows' is not a node OS"),
        (["bogus"], "No such command 'bogus'"),
    ],
)
def test_bad_arguments_print_one_error_line_and_exit_2(capsys, args, message):
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert message in lines[0]


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "check" in capsys.readouterr().out


# --- refresh: matrix.yaml against what NVIDIA publishes ----------------------------------------------------------

def _require_upstream() -> Path:
    return upstream_file("nvidia")


def test_refresh_against_the_snapshots_exits_0_as_a_module():
    _require_upstream()
    result = run_module("refresh")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "agrees with upstream" in result.stdout


def test_refresh_prints_each_difference_and_exits_1(tmp_path, capsys):
    upstream = _require_upstream()
    text = MATRIX_PATH.read_text(encoding="utf-8")
    tampered = tmp_path / "matrix.yaml"
    # The matrix as it was before the audit: v26.3.1 claimed Kubernetes 1.36 on EKS.
    start = text.index("  - version: v26.3.1\n")
    row = text[start : text.index("  - version: v26.3.2\n")]
    tampered.write_text(text.replace(row, row.replace("eks: ['1.32', '1.35']", "eks: ['1.32', '1.36']")))
    code = main(["refresh", "--matrix", str(tampered), "--upstream", str(upstream)])
    out = capsys.readouterr().out
    assert code == 1
    assert "1 difference(s)" in out
    assert "operators[v26.3.1].eks: matrix.yaml [1.32, 1.36]; upstream [1.32, 1.35]" in out


def test_refresh_write_puts_upstream_values_into_the_rows_and_keeps_the_rest(tmp_path, capsys):
    upstream = _require_upstream()
    text = MATRIX_PATH.read_text(encoding="utf-8")
    tampered = tmp_path / "matrix.yaml"
    stale_drivers = "drivers: [610.57.04, 595.91.07, 580.173.02, 535.309.01]"
    assert stale_drivers in text
    stale_text = text.replace(stale_drivers, "drivers: [610.57.04, 595.91.07, 580.178.04, 580.173.02, 535.309.01]")
    stale_text = stale_text.replace("since: 2026-05-29, branches: [580, 595]", "since: 2026-08-01, branches: [580, 5]")
    tampered.write_text(stale_text)
    assert main(["refresh", "--matrix", str(tampered), "--upstream", str(upstream), "--write", *TODAY]) == 0
    capsys.readouterr()
    assert main(["refresh", "--matrix", str(tampered), "--upstream", str(upstream)]) == 0
    written = tampered.read_text(encoding="utf-8")
    head = text[: text.index("driver_images:")]
    assert written.startswith(head)  # sections without a difference stay byte for byte
    v2670 = parse_matrix(written).operators[-1]
    assert v2670.version == "v26.7.0"
    assert "580.178.04" not in v2670.drivers
    assert v2670.reviewed == date(2026, 11, 30)  # the row keeps its reviewed date


def test_refresh_without_the_snapshot_folder_is_a_usage_error(tmp_path, capsys):
    code = main(["refresh", "--upstream", str(tmp_path / "nowhere")])
    err = capsys.readouterr().err
    assert code == 2
    assert "upstream snapshot folder is missing" in err
    assert "--fetch" in err


def _docs_and_ci(upstream: Path) -> dict[str, bytes]:
    docs = upstream / "cloud-native-docs"
    newest_ci = sorted((upstream / "gpu-driver-container-ci-history").glob("*.yml"))[-1]
    return {
        "/gpu-operator/life-cycle-policy.rst": (docs / "life-cycle-policy.rst").read_bytes(),
        "/gpu-operator/platform-support.rst": (docs / "platform-support.rst").read_bytes(),
        "/ci/.common-ci.yml": newest_ci.read_bytes(),
    }


def _serve_files(files: dict[str, bytes]):
    def handle(handler):
        body = files.get(handler.path)
        handler.send_response(200 if body is not None else 404)
        handler.send_header("Content-Length", str(len(body or b"")))
        handler.end_headers()
        if handler.command == "GET" and body:
            handler.wfile.write(body)

    return fake_server(handle)


@pytest.fixture(scope="module")
def driver_registry(tmp_path_factory):
    with run_registry(tmp_path_factory.mktemp("registry")) as reg:
        for tag in ("580.173.02-ubuntu24.04", "595.91.07-ubuntu24.04", "580-6.8.0-1024-aws-ubuntu24.04"):
            reg.push_image("nvidia/driver", tag)
        yield reg


@pytest.mark.registry
def test_refresh_fetch_reads_github_and_the_registry_tags_list(driver_registry, capsys):
    upstream = _require_upstream()
    with _serve_files(_docs_and_ci(upstream)) as (url, seen):
        code = main(
            ["refresh", "--fetch", "--docs-url", f"{url}/gpu-operator", "--ci-url", f"{url}/ci/.common-ci.yml",
             "--registry", driver_registry.url, "--timeout", "5", "--no-images", "--no-image-releases", *TODAY]
        )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "agrees with upstream" in out
    assert sorted(line.split()[1] for line in seen) == sorted(_docs_and_ci(upstream))


@pytest.mark.registry
def test_refresh_fetch_reports_a_driver_tag_the_matrix_lacks(driver_registry, capsys):
    upstream = _require_upstream()
    driver_registry.push_image("nvidia/driver", "620.11.01-ubuntu24.04")
    with _serve_files(_docs_and_ci(upstream)) as (url, _):
        code = main(
            ["refresh", "--fetch", "--docs-url", f"{url}/gpu-operator", "--ci-url", f"{url}/ci/.common-ci.yml",
             "--registry", driver_registry.url, "--timeout", "5", "--no-images", "--no-image-releases", *TODAY]
        )
    out = capsys.readouterr().out
    assert code == 1
    assert "driver_images[ubuntu24.04].versions" in out
    assert "upstream [620.11.01, 610.57.04" in out


def test_refresh_fetch_gives_up_within_the_timeout_on_a_silent_server(capsys):
    with silent_server() as url:
        started = time.monotonic()
        code = main(["refresh", "--fetch", "--docs-url", url, "--ci-url", f"{url}/ci.yml", "--registry", url,
                     "--timeout", "0.5", *TODAY])
        elapsed = time.monotonic() - started
    assert code == 2
    assert "no answer within 0.5s" in capsys.readouterr().err
    assert elapsed < 5


def test_tags_list_follows_the_anonymous_token_flow_and_next_pages():
    def handle(handler):
        auth = handler.headers.get("Authorization", "")
        if handler.path.startswith("/token"):
            body = json.dumps({"token": "anon"}).encode()
            handler.send_response(200)
        elif auth != "Bearer anon":
            body = b""
            handler.send_response(401)
            handler.send_header("WWW-Authenticate", f'Bearer realm="{base[0]}/token",service="fake"')
        elif "last=" not in handler.path:
            body = json.dumps({"name": "nvidia/driver", "tags": ["580.173.02-ubuntu24.04"]}).encode()
            handler.send_response(200)
            handler.send_header("Link", '</v2/nvidia/driver/tags/list?n=1000&last=580.173.02-ubuntu24.04>; rel="next"')
        else:
            body = json.dumps({"name": "nvidia/driver", "tags": ["595.91.07-ubuntu24.04"]}).encode()
            handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    base: list[str] = []
    with fake_server(handle) as (url, seen):
        base.append(url)
        tags = list_tags("nvcr.io/nvidia/driver", timeout_s=5, registry_override=url)
    assert tags == ["580.173.02-ubuntu24.04", "595.91.07-ubuntu24.04"]
    assert seen[0].startswith("GET /v2/nvidia/driver/tags/list?n=1000 auth=")
    assert seen[-1].endswith("auth=Bearer anon")


# --- stale: rows whose review is old ------------------------------------------------------------------------------


def test_stale_lists_rows_reviewed_before_the_cutoff_and_exits_0(capsys):
    code = main(["stale", "--days", "180", "--today", "2027-05-29"])
    out = capsys.readouterr().out
    assert code == 0
    assert "reviewed before 2026-11-30 (180 days)" in out
    assert "  cuda_releases[13.3.1]: reviewed 2026-11-29" in out
    assert "cuda_releases[13.5.0]" not in out  # reviewed 2026-11-30, on the cutoff
    assert "node_images[al2023].baked_driver[570@2025-04-01]: reviewed 2026-11-29" in out
    assert "precompiled_builds[ubuntu22.04@2025-03-25]" not in out  # rewritten from the CI history on 2026-11-30


def test_stale_with_nothing_old_says_so(capsys):
    assert main(["stale", "--today", "2026-12-01"]) == 0
    assert "no row of" in capsys.readouterr().out


def test_stale_rejects_a_negative_day_count(capsys):
    assert main(["stale", "--days", "-1"]) == 2
    assert "--days -1 must be zero or more" in capsys.readouterr().err


def test_drivers_lists_the_branches_in_support_before_an_ended_one(capsys):
    """Issue 46: 610.57.04 (R610, end of life August 2026) headed the list for a v26.7.0 pool."""
    args = ["drivers", "--os", "ubuntu-24.04", "--operator", "v26.7.0", "--today", "2026-12-05"]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "drivers that fit ubuntu-24.04, GPU Operator v26.7.0 (in support first, newest first):"
    assert [line.split()[0] for line in lines[1:4]] == ["595.91.07", "580.173.02", "610.57.04"]
    assert "[advisory] R610 reached end of life in August 2026" in lines[3]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["drivers"]
    assert [(r["version"], bool(r["notes"])) for r in rows] == [
        ("595.91.07", False), ("580.173.02", False), ("610.57.04", True)]
