"""The GPU probe (components/probe/probe.py) without a GPU: recorded nvidia-smi output of the real H200 run.

bench/probe_runs/2026-12-01-h200-r580 holds what bench/probe_gpu.sh recorded on an NVIDIA H200 with driver
580.159.04; these tests replay its `nvidia-smi --query-gpu` output through the probe's driver check, and
compare every kernel verdict of that run with `tools.matrix check` (bench/probe_vs_matrix.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import probe_vs_matrix
from components.probe import probe
from tests.components.harness import REPO

RUN = REPO / "bench/probe_runs/2026-12-01-h200-r580"
SMI = RUN / "nvidia-smi-query.csv"


def _check(capsys: pytest.CaptureFixture[str], *args: str, smi: Path = SMI) -> tuple[int, str, str]:
    code = probe.main(["check", "--pool", "h200", "--cuda", "13.0", "--code", "none",
                       "--nvidia-smi-output", str(smi), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_recorded_nvidia_smi_is_the_h200_on_r580():
    (gpu,) = probe.parse_nvidia_smi(SMI.read_text())
    assert gpu == probe.Gpu(index=0, name="NVIDIA H200", driver="580.159.04", compute_cap="9.0")
    assert "Driver Version: 580.159.04" in (RUN / "nvidia-smi.txt").read_text()


@pytest.mark.parametrize("pin", ["580.159.04", "580"])
def test_probe_passes_with_the_right_pin_or_branch(capsys: pytest.CaptureFixture[str], pin: str):
    code, out, err = _check(capsys, "--driver", pin)
    assert code == probe.EXIT_PASS
    assert err == ""
    assert out.splitlines()[-1] == f"verdict: pass (pool h200, driver expected {pin}, found 580.159.04)"


@pytest.mark.parametrize(("pin", "shown"), [("580.95.05", "580.95.05"), ("570.195.03", "570.195.03"),
                                            ("590", "branch R590"), ("580.159.0", "580.159.0")])
def test_probe_fails_with_a_wrong_pin_naming_pool_found_and_expected(
        capsys: pytest.CaptureFixture[str], pin: str, shown: str):
    code, out, err = _check(capsys, "--driver", pin)
    assert code == probe.EXIT_FAIL
    assert err.strip() == (f"error: pool h200: node driver 580.159.04 is not the pinned driver {shown} "
                           "(GPU NVIDIA H200); the node was not built from the pool's pinned driver: check the "
                           "pool's AMI or the GPU Operator's driver.version")
    assert out.splitlines()[-1].startswith("verdict: fail (pool h200")


def test_one_message_per_distinct_wrong_driver_on_a_mixed_node(tmp_path: Path):
    smi = tmp_path / "smi.csv"
    smi.write_text("0, NVIDIA H200, 580.159.04, 9.0\n1, NVIDIA H200, 580.159.04, 9.0\n2, NVIDIA L4, 570.1.2, 8.9\n")
    problems = probe.driver_problems("mixed", probe.parse_nvidia_smi(smi.read_text()), "570.1.2")
    assert problems == ["pool mixed: node driver 580.159.04 is not the pinned driver 570.1.2 (GPU NVIDIA H200); "
                        "the node was not built from the pool's pinned driver: check the pool's AMI or the GPU "
                        "Operator's driver.version"]


def test_json_report_names_the_verdict(capsys: pytest.CaptureFixture[str]):
    code, out, _ = _check(capsys, "--driver", "580.95.05", "--json")
    document = json.loads(out)
    assert code == probe.EXIT_FAIL
    assert document["verdict"] == "fail"
    assert document["gpus"][0]["driver"] == "580.159.04"
    assert document["expected_driver"] == "580.95.05"


@pytest.mark.parametrize(("text", "message"), [
    ("", "nvidia-smi listed no GPU"),
    ("0, NVIDIA H200, No devices were found\n", "unexpected nvidia-smi line"),
    ("GPU 0: NVIDIA H200\n", "unexpected nvidia-smi line"),
])
def test_unreadable_nvidia_smi_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str):
    smi = tmp_path / "smi.csv"
    smi.write_text(text)
    code, out, err = _check(capsys, "--driver", "580", smi=smi)
    assert code == probe.EXIT_USAGE
    assert message in err and out == ""
    assert "Traceback" not in err


@pytest.mark.parametrize(("args", "message"), [
    (["--driver", "R580"], "--driver 'R580' is not a driver version"),
    (["--driver", "580", "--cuda", "thirteen"], "--cuda 'thirteen' is not a CUDA version"),
    (["--driver", "580", "--code", "cubin"], "--code cubin: choose from sass, ptx or none"),
])
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], message: str):
    code, _, err = _check(capsys, *args)
    assert code == probe.EXIT_USAGE
    assert message in err


def test_missing_wheels_exit_2_naming_the_package(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("sys.path", [])
    code = probe.main(["check", "--pool", "h200", "--driver", "580", "--cuda", "13.0", "--code", "sass",
                       "--nvidia-smi-output", str(SMI)])
    assert code == probe.EXIT_USAGE
    assert "nvidia/cu13/lib/libcudart.so.13 not found on sys.path: install nvidia-cuda-runtime" in (
        capsys.readouterr().err)


def test_ptx_isa_is_read_from_the_recorded_run():
    assert probe.ptx_isa(b"//\n.version 9.2\n.target sm_90\n") == "9.2"
    assert probe.ptx_isa(b"\x7fELF") is None


def test_every_kernel_verdict_on_the_h200_agrees_with_the_matrix():
    rows = probe_vs_matrix.compare(RUN, today="2026-12-01")
    assert rows and all(row.agrees for row in rows), [row for row in rows if not row.agrees]
    # The run covers both sides: native CUDA (ok: SASS and PTX run) and minor version compatibility
    # (advisory: SASS runs, PTX from the newer toolkit fails with cudaErrorUnsupportedPtxVersion).
    assert {(row.level, row.code, row.observed) for row in rows} == {
        ("ok", "sass", "runs"), ("ok", "ptx", "runs"), ("advisory", "sass", "runs"), ("advisory", "ptx", "fails")}
    assert {row.built_with for row in rows if row.level == "advisory"} == {"13.2", "13.5"}


def test_recorded_scenarios_exit_as_the_probe_promises():
    results = {r["scenario"]: r for r in map(json.loads, (RUN / "results.jsonl").read_text().splitlines())}
    assert {name: r["rc"] for name, r in results.items()} == {
        "right-pin": 0, "right-branch": 0, "wrong-pin-same-branch": 1, "wrong-pin-older-branch": 1,
        "right-pin-host-built": 0, "runtime-12.8": 0, "runtime-13.2": 1, "runtime-13.5": 1,
        "ptx-13.2-on-runtime-13.0": 1, "ptx-13.5-on-runtime-13.0": 1}
    assert "cudaErrorUnsupportedPtxVersion (222)" in results["runtime-13.2"]["report"]["problems"][0]
    assert "not the pinned driver 580.95.05" in results["wrong-pin-same-branch"]["report"]["problems"][0]


def test_bench_comparison_exits_1_when_the_gpu_disagrees(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    lines = (RUN / "results.jsonl").read_text().splitlines()
    doctored = json.loads(lines[0])
    doctored["report"]["kernels"][1]["passed"] = False  # PTX of CUDA 13.0 "failing" on R580: the matrix says ok
    (tmp_path / "results.jsonl").write_text(json.dumps(doctored) + "\n")
    assert probe_vs_matrix.main([str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1].endswith("NO")
