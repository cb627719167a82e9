"""`python -m tools.matrix`: verdicts, sources, nearest choices, JSON, and exit codes 0 / 1 / 2.

Most tests call `main()` in-process (fast); a few run the real module with the venv python from the
repository root, as CONFIG.md section 3 documents it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tools.matrix import main

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
    assert "nearest valid: 535.309.01" in result.stdout


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
    assert out.splitlines()[0] == "verdict: COMPATIBLE (with advisories)"
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
    assert image["nearest"][0] == "535.309.01"
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
    assert versions == ["610.57.04", "595.91.07", "580.173.02", "535.309.01"]
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
            "--operator 'v9.9.9' is not a GPU Operator release",
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
