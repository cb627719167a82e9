"""policies/gpu_guard/vllm_fit: one test per class of defect of issue 52's "vLLM's startup" (the GPU memory vLLM
budgets from, the per-release rules, the weights by tensor class, the flags the pack reads, the config's
maxModelLen). The outcomes of whole service shapes are in test_vllm_startup_cases.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.config import InferenceServiceConfig
from components.config.issues import ConfigIssue
from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.model_fit import declared_model, model_argument, serving_args
from policies.gpu_guard.vllm_fit import RELEASES, ServingArgs, fit_findings, release_of_image
from policies.gpu_guard.vllm_fit.memory import gpu_memory

REPO = Path(__file__).resolve().parents[2]


def _every_instance_type() -> list[str]:
    matrix = load_matrix()
    return [f"{row.family}.{size}" for row in matrix.data.instance_families for size in row.sizes]


def test_every_nvidia_instance_type_of_the_matrix_has_its_gpus_cuda_total_with_a_source() -> None:
    matrix = load_matrix()
    names = _every_instance_type()
    assert len(names) > 60
    for name in names:
        inst = matrix.instance_type(name)
        assert inst is not None, name
        gpu = next(g for g in matrix.data.gpus if g.model == inst.gpu_model)
        if tuple(int(x) for x in gpu.compute_capability.split(".")) < (7, 0):
            # p2 (K80), g3/g3s (M60), g2 (K520): below compute capability 7.0, the oldest any vLLM release of the
            # matrix is built for (serving-image-architecture refuses the image first), so no fit is computed there.
            continue
        memory = gpu_memory(matrix, inst)
        assert memory is not None, f"{name} ({inst.gpu_model}): no CUDA total in matrix.yaml gpu_memory"
        assert 10 < memory.low_gib <= memory.high_gib < 300, name
        if memory.estimate:
            assert memory.source.startswith("estimate: "), name  # labelled, with how it was estimated
        else:
            assert "https://" in memory.source, name  # a measurement, cited


def test_the_cuda_total_is_below_ec2s_figure_and_measured_where_a_public_log_gives_it() -> None:
    matrix = load_matrix()
    t4, h100 = matrix.instance_type("g4dn.xlarge"), matrix.instance_type("p5.48xlarge")
    assert t4 is not None and h100 is not None
    t4_memory, h100_memory = gpu_memory(matrix, t4), gpu_memory(matrix, h100)
    assert t4_memory is not None and h100_memory is not None
    # The T4 is not the 16 GiB EC2 lists: CUDA reports 14.58 GiB (ECC), what vLLM multiplies by the utilization.
    assert (round(t4_memory.low_gib, 2), t4_memory.estimate) == (14.58, False)
    assert (round(h100_memory.low_gib, 2), round(h100_memory.high_gib, 2)) == (79.1, 79.18)
    for row in matrix.data.gpu_memory:
        assert row.cuda_total_mib is not None and row.cuda_total_mib <= row.usable_mib, row.model


def test_one_gpu_model_in_two_sizes_is_keyed_by_instance_family() -> None:
    matrix = load_matrix()
    sizes = {}
    for name in ("p4d.24xlarge", "p4de.24xlarge", "p3.2xlarge", "p3dn.24xlarge"):
        inst = matrix.instance_type(name)
        assert inst is not None
        memory = gpu_memory(matrix, inst)
        assert memory is not None
        sizes[name] = round(memory.high_gib)
    assert sizes == {"p4d.24xlarge": 40, "p4de.24xlarge": 80, "p3.2xlarge": 16, "p3dn.24xlarge": 32}


def test_every_admitted_vllm_tag_is_judged_by_its_own_releases_rules() -> None:
    matrix = load_matrix()
    tags = {row.release for row in matrix.data.serving_images if row.repository == "vllm/vllm-openai"}
    assert tags and tags <= set(RELEASES), tags - set(RELEASES)
    rules = {t: (r.default_utilization, r.extensible, r.auto_fit, r.graphs_counted) for t, r in RELEASES.items()}
    assert rules["v0.12.0"] == (0.9, False, False, False)  # no --max-model-len -1 yet
    assert rules["v0.14.0"] == (0.9, False, True, False)
    assert rules["v0.20.0"] == (0.92, False, True, False)
    assert rules["v0.21.0"] == (0.92, False, True, True)  # CUDA graph profiling on by default
    assert rules["v0.34.0"] == (1.0, True, True, True)  # the extensible KV cache
    assert release_of_image("vllm/vllm-openai:v0.20.0-cu129") == RELEASES["v0.20.0"]
    assert release_of_image("vllm/vllm-openai:v0.11.0") is None  # not admitted: unjudged, never PASS
    assert release_of_image("vllm/vllm-openai:latest") is None


def test_the_same_shape_is_judged_by_each_releases_default_utilization() -> None:
    # 19.9 GiB of weights on one L4 (22.1-22.35 GiB): at v0.12.0 (0.9) the budget is at most 20.1 GiB: 0.2 GiB left,
    # less than one 8192-token request of 0.22 GiB: refused; at v0.34.0 (1.0) 1.2 GiB are left at best: not refused.
    model = declared_model({"modelGiB": 19.9, "layers": 28, "kvHeads": 2, "headDim": 128})
    levels = {}
    for tag in ("v0.12.0", "v0.34.0"):
        args = ServingArgs(max_model_len=8192, image=f"vllm/vllm-openai:{tag}")
        levels[tag] = {f.level for f in fit_findings(load_matrix(), model, args, ["g6.xlarge"])}
    assert "mandatory" in levels["v0.12.0"] and "mandatory" not in levels["v0.34.0"]


def test_quantized_weights_keep_16_bit_embeddings_and_count_group_scales() -> None:
    # Qwen2.5-32B-Instruct-AWQ: 32.8e9 parameters, vocab 152064 x hidden 5120, untied: the embeddings and lm_head
    # (1.56e9 parameters) stay 16-bit, the rest takes 4 bits plus a 16-bit scale and a 4-bit zero per 128.
    awq = declared_model({"parametersBillions": 32.8, "precision": "int4", "vocabSize": 152064, "hiddenSize": 5120})
    assert round(awq.weights_gib(), 1) == 18.0  # not 32.8e9 x 0.5 bytes = 15.3 GiB
    # Without the shape, the 16-bit part is unknown: counted at the quantized size, with a slack for the worst case.
    bare = declared_model({"parametersBillions": 32.8, "precision": "int4"})
    assert round(bare.weights_gib(), 1) == 15.9 and bare.extra_gib > 2
    # A 16-bit model's weights double where vLLM falls back to fp32 (compute dtype of 4 bytes).
    gemma = declared_model({"parametersBillions": 3.8, "modelType": "gemma2"})
    assert (round(gemma.weights_gib(2), 1), round(gemma.weights_gib(4), 1)) == (7.1, 14.2)


def test_the_pack_reads_every_flag_the_fit_needs_from_the_containers_words() -> None:
    words = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size=2", "--max-model-len",
             "32k", "--gpu-memory-utilization", "0.85", "--kv-cache-dtype", "fp8", "--dtype", "half",
             "--max-num-batched-tokens", "4K", "--max-num-seqs", "64", "--enforce-eager"]
    args = serving_args(words, image="vllm/vllm-openai:v0.34.0", env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})
    assert (args.tensor_parallel, args.max_model_len, args.gpu_memory_utilization, args.kv_cache_dtype, args.dtype,
            args.max_num_batched_tokens, args.max_num_seqs, args.enforce_eager, args.allow_long_max_model_len) == (
        2, 32000, 0.85, "fp8", "half", 4096, 64, True, True)
    assert model_argument(words) == "meta-llama/Llama-3.1-8B-Instruct"
    assert model_argument(["/models/qwen", "--max-model-len", "8192"]) == "/models/qwen"  # the image's entrypoint
    assert serving_args(["--max-model-len", "auto"], image=None).max_model_len == -1
    unmodelled = serving_args(["--enable-lora", "--speculative-config", "{}", "-pp", "2", "--data-parallel-size", "2",
                               "--enable-expert-parallel", "--cpu-offload-gb", "4", "--kv-cache-memory-bytes", "1"],
                              image=None).unmodelled
    assert set(unmodelled) == {"LoRA", "speculative decoding", "pipeline parallelism", "data parallelism",
                               "expert parallelism", "CPU offload (--cpu-offload-gb)", "--kv-cache-memory-bytes"}


def _vllm(**vllm: object) -> InferenceServiceConfig:
    return InferenceServiceConfig.model_validate({
        "name": "llm", "runtime": "vllm", "image": "vllm/vllm-openai:v0.34.0",
        "vllm": {"modelPath": "/models/m", **vllm}})


def test_max_model_len_minus_one_is_accepted_as_vllm_fits_it_to_memory() -> None:
    service = _vllm(maxModelLen=-1)
    assert service.vllm is not None and service.vllm.max_model_len == -1


@pytest.mark.parametrize("value", [0, 8, -2])
def test_a_max_model_len_that_is_neither_a_length_nor_minus_one_is_one_clear_error(value: int) -> None:
    with pytest.raises((ConfigIssue, ValueError)) as err:
        _vllm(maxModelLen=value)
    assert "maxModelLen" in str(err.value)


def test_the_fix_gives_the_real_numbers() -> None:
    # Llama 3.1 8B on one L4 at its whole context (131072): refused, with the longest length that fits at the
    # worst case of the overhead, and fp8 or auto-fit as other ways out.
    model = declared_model({"parametersBillions": 8.03, "layers": 32, "kvHeads": 8, "headDim": 128,
                            "attentionHeads": 32, "hiddenSize": 4096, "intermediateSize": 14336, "vocabSize": 128256,
                            "contextLength": 131072})
    [finding] = fit_findings(load_matrix(), model, ServingArgs(image="vllm/vllm-openai:v0.34.0"), ["g6.xlarge"])
    assert finding.level == "mandatory" and finding.key == "maxModelLen"
    assert finding.message.endswith("Fix: lower maxModelLen to 11264, or use kvCacheDtype fp8 (half the KV cache), or "
                                    "set maxModelLen -1: vLLM fits it to memory")
    # On a 4-GPU instance the fix offers the smallest tensor-parallel size that fits at the worst case (TP 2 leaves
    # 7.5 GiB of weights and 8 GiB of KV cache a GPU, too much; TP 4 fits).
    [finding] = fit_findings(load_matrix(), model, ServingArgs(image="vllm/vllm-openai:v0.34.0"), ["g6.12xlarge"])
    assert "raise gpusPerReplica to 4," in finding.message


def test_the_fit_modules_stay_small() -> None:
    for path in [REPO / "policies/gpu_guard/model_fit.py", *(REPO / "policies/gpu_guard/vllm_fit").glob("*.py")]:
        assert len(path.read_text().splitlines()) < 600, path
