"""The serving images of the matrix (vllm/vllm-openai): each row sourced at its own tag, the tags that resolve to a
row, the CUDA verdict they get, and the rule of which compiled architectures run on which GPU."""

from __future__ import annotations

import re

import pytest

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.matrix.serving_images import runs_on


def test_every_vllm_row_cites_the_release_pipeline_of_its_own_tag():
    rows = [r for r in load_matrix().data.serving_images if r.repository == "vllm/vllm-openai"]
    assert rows
    for row in rows:
        assert row.source.startswith(f"https://github.com/vllm-project/vllm/blob/{row.release}/.buildkite/"
                                     "release-pipeline.yaml#L"), row
        assert re.search(r"docker/Dockerfile:\d+ says ARG CUDA_VERSION=", row.note or ""), row


def test_the_releases_of_the_last_twelve_months_are_recorded():
    releases = {r.release for r in load_matrix().data.serving_images
                if r.repository == "vllm/vllm-openai" and r.variant == ""}
    # Every vLLM release from v0.12.0 (2025-12-03) to v0.34.0 (2026-11-16) with an sdist on PyPI (v0.15.x has none).
    assert {"v0.13.0", "v0.14.0", "v0.16.0", "v0.19.1", "v0.20.0", "v0.27.1", "v0.33.0", "v0.34.0"} <= releases
    assert len(releases) == 31


@pytest.mark.parametrize(("image", "cuda"), [
    ("vllm/vllm-openai:v0.34.0", "13.0.2"),
    ("docker.io/vllm/vllm-openai:v0.34.0-x86_64", "13.0.2"),
    ("vllm/vllm-openai:v0.32.0-cu129", "12.9.1"),
    ("vllm/vllm-openai:v0.19.1", "12.9.1"),
    ("vllm/vllm-openai:v0.19.1-aarch64-cu130", "13.0.1"),
    ("vllm/vllm-openai:v0.12.0", "12.9.1"),
])
def test_a_recorded_tag_reveals_its_cuda(image, cuda):
    revealed = load_matrix().image_cuda(image)
    assert revealed is not None and revealed.cuda == cuda
    assert revealed.forward_compat  # the runtime stage is FROM nvidia/cuda:<cuda>-base


@pytest.mark.parametrize("image", [
    "vllm/vllm-openai:latest", "vllm/vllm-openai:nightly", "vllm/vllm-openai:v0.34.0-efa",
    "vllm/vllm-openai:v0.34.0-cu129",  # no -cu129 after v0.32.0
    "vllm/vllm-openai:v0.14.0-cu130",  # built, not published by v0.14.0's release script
    "vllm/vllm-openai:v0.15.1", "someone/vllm-openai:v0.34.0",
])
def test_an_unrecorded_tag_reveals_nothing(image):
    assert load_matrix().image_cuda(image) is None


def test_a_cuda_13_vllm_image_admits_the_branches_of_its_nvidia_cuda_base():
    revealed = load_matrix().image_cuda("vllm/vllm-openai:v0.34.0")
    assert revealed is not None and revealed.admitted_branches == (535, 550, 565, 570, 575)


@pytest.mark.parametrize(("arch_list", "cc", "runs"), [
    (("7.5", "8.0"), "7.5", True),
    (("7.5", "8.0"), "8.6", True),  # a cubin runs on the same major at a higher minor
    (("8.0", "8.9"), "7.5", False),  # never on a lower major
    (("8.0", "8.9"), "9.0", False),  # nor on a higher major without PTX
    (("8.0", "12.0+PTX"), "12.1", True),
    (("8.0+PTX",), "9.0", True),  # PTX is JIT-compiled for any newer GPU
    (("9.0a",), "9.0", True),
    (("9.0a",), "10.0", False),  # an arch-specific target runs on that capability only
    (("10.0",), "10.3", True),
])
def test_compiled_architectures_run_by_cudas_binary_compatibility(arch_list, cc, runs):
    assert runs_on(arch_list, cc) is runs


def test_the_image_of_the_instances_cpu_architecture_is_judged():
    matrix = load_matrix()
    assert [f.level for f in matrix.image_architecture("vllm/vllm-openai:v0.34.0", "g4dn.xlarge")] == ["ok"]
    # g5g is Graviton: the aarch64 image, compiled from 8.0 up, has nothing for the T4G (7.5).
    assert [f.level for f in matrix.image_architecture("vllm/vllm-openai:v0.34.0", "g5g.xlarge")] == ["mandatory"]
    assert matrix.image_architecture("vllm/vllm-openai:latest", "g5g.xlarge") == []


def test_gpu_memory_is_recorded_per_model_with_its_source():
    matrix = load_matrix()
    inst = matrix.instance_type("g6.xlarge")
    assert inst is not None
    # The usable figure is what EC2 reports (Karpenter v1.14.1's instance-gpu-memory), not the 24 GiB AWS lists.
    assert matrix.gpu_memory_gib(inst) == (22888 / 1024, "https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/"
                                                          "website/content/en/docs/reference/instance-types.md#L10227")
    row = next(r for r in matrix.data.gpu_memory if r.model == "L4")
    assert (row.memory_gib, row.usable_mib) == (24, 22888)
    # One GPU model in two sizes is keyed by family: p4d's A100 has 40 GiB, p4de's 80.
    p4d, p4de = matrix.instance_type("p4d.24xlarge"), matrix.instance_type("p4de.24xlarge")
    assert p4d is not None and p4de is not None
    assert [matrix.gpu_memory_gib(i)[0] for i in (p4d, p4de)] == [40.0, 80.0]  # type: ignore[index]


def test_tgi_is_recorded_from_its_tagged_dockerfile_x86_64_only_and_serves_turing_through_flashinfer():
    matrix = load_matrix()
    image = "ghcr.io/huggingface/text-generation-inference:3.3.7"
    revealed = matrix.image_cuda(image)
    assert revealed is not None and revealed.cuda == "12.4.0"
    assert revealed.source == "https://github.com/huggingface/text-generation-inference/blob/v3.3.7/Dockerfile#L144"
    assert [f.level for f in matrix.image_architecture(image, "g6.xlarge")] == ["ok"]  # 8.9 runs 8.0/8.6 cubins
    # 7.5: TGI's default attention path is flashinfer, built for 7.5;8.0;8.6;8.9;9.0+PTX (server/Makefile-flashinfer:6
    # at v3.3.7), as its docs' T4 says (issue 52); the V100 (7.0) has no kernel in that list.
    assert [f.level for f in matrix.image_architecture(image, "g4dn.xlarge")] == ["ok"]
    assert [f.level for f in matrix.image_architecture(image, "p3.2xlarge")] == ["mandatory"]
    assert all(not r.confirmed and "Makefile-flashinfer:6" in (r.note or "")
               for r in matrix.data.serving_images if r.repository.endswith("text-generation-inference"))
    assert "publishes no arm64 image" in matrix.image_architecture(image, "g5g.xlarge")[0].message


@pytest.mark.parametrize("release", ["v0.16.0", "v0.17.0", "v0.17.1", "v0.18.0", "v0.18.1", "v0.19.0", "v0.19.1"])
def test_a_cu130_vllm_image_records_what_is_compiled_not_requested(release):
    # CUDA 13 builds drop 7.0: CMakeLists.txt:95-97 at each tag lists no 7.0 for CUDA >= 13.0, and the requested
    # archs are intersected with that list (cmake/utils.cmake cuda_archs_loose_intersection). A V100 cannot run it.
    matrix = load_matrix()
    row = next(r for r in matrix.data.serving_images
               if r.repository == "vllm/vllm-openai" and r.release == release and r.variant == "cu130")
    assert "7.0" not in row.arch_x86_64.split() and "CMakeLists.txt:95-97" in (row.note or "")
    assert [f.level for f in matrix.image_architecture(f"vllm/vllm-openai:{release}-cu130", "p3.2xlarge")] == [
        "mandatory"]
    assert [f.level for f in matrix.image_architecture(f"vllm/vllm-openai:{release}", "p3.2xlarge")] == ["ok"]
