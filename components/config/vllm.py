"""The vLLM part of an inference service: `inferenceServices[].vllm` and the ingress's OIDC authentication.

A service with `runtime: vllm` runs vLLM's OpenAI-compatible server (components/inference/vllm.py holds the pinned
release's flags, routes and metric names). Its tensor-parallel size is the service's `gpusPerReplica`: vLLM shards
the weights over every GPU the replica holds (docs/configuration/conserving_memory.md, "Tensor Parallelism").

Sources (vllm-project/vllm @ v0.34.0):
- `--max-model-len`, `--gpu-memory-utilization` (0 < x <= 1): vllm/config/cache.py:216-234 (unset: 1.0 with the
  extensible KV cache, the default on CUDA; 0.92 otherwise), docs/configuration/optimization.md "GPU Memory
  Utilization".
- Weight bytes per parameter: bf16/fp16 2, fp8/int8 1, int4 0.5 (the size of each dtype; vLLM's `get_dtype_size`,
  vllm/utils/torch_utils.py). fp32 counts 2: without `--dtype` (the stack never passes one) vLLM downcasts an fp32
  checkpoint to the platform's preferred dtype, bf16 at compute capability 8.0 or above and fp16 below
  (vllm/config/model.py:2484-2486, vllm/platforms/cuda.py:298-304):
  https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L2484-L2486
- KV cache per token and layer: K and V of `num_kv_heads` heads of `head_size` each, at the KV dtype's size
  (vllm/v1/kv_cache_interface.py:590-601, `(head_size + head_size_v) * get_dtype_size(dtype)` per head).
- ALB OIDC authentication (`auth-type: oidc`, `auth-idp-oidc` JSON with issuer, authorizationEndpoint,
  tokenEndpoint, userInfoEndpoint, secretName; the Secret holds clientID and clientSecret in the Ingress's
  namespace; only on HTTPS listeners):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#authentication
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from components.config.base import _Model
from components.config.fields import ServiceName
from components.config.issues import ConfigIssue
from components.config.vllm_model_id import check_model_id

Precision = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4"]
# vLLM's --kv-cache-dtype names (`CacheDType`, vllm/config/cache.py:44-58 at v0.34.0), those with a fixed size on CUDA.
KvDtype = Literal["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"]
# What vLLM holds in GPU memory per parameter: fp32 checkpoints are loaded as bf16/fp16 (module docstring).
BYTES_PER_PARAMETER: dict[str, float] = {"fp32": 2, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}
# `auto` is the model's compute dtype (`kv_cache_dtype_str_to_dtype`, vllm/utils/torch_utils.py:539-545), bf16 or
# fp16 for every checkpoint precision: quantized (fp8, int8, int4) weights compute in it and fp32 ones load in it.
# Source: https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/utils/torch_utils.py#L539-L545
KV_BYTES: dict[str, int] = {"auto": 2, "bfloat16": 2, "float16": 2, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
GIB = 1024**3


class SecretKeyConfig(_Model):
    """A key of a Kubernetes Secret in the service's namespace (created outside the stack: its value is no config)."""

    name: ServiceName = Field(description="Secret name.")
    key: str = Field(default="api-key", min_length=1, max_length=253, description="Key inside the Secret.")


class ModelShapeConfig(_Model):
    """`vllm.shape`: what sizes the KV cache of one token (the model's config.json)."""

    layers: int = Field(ge=1, le=1024, description="num_hidden_layers.")
    kv_heads: int = Field(ge=1, le=1024, alias="kvHeads", description="num_key_value_heads (num_attention_heads "
                                                                        "without grouped-query attention).")
    head_dim: int = Field(ge=1, le=4096, alias="headDim", description="head_dim (hidden_size / num_attention_heads).")
    kv_cache_dtype: KvDtype = Field(
        default="auto", alias="kvCacheDtype",
        description="vLLM --kv-cache-dtype, passed to the server when not auto; auto: the model's compute dtype "
                    "(bf16/fp16, 2 bytes, also for fp8 weights).")
    attention_heads: int | None = Field(default=None, ge=1, le=4096, alias="attentionHeads",
                                        description="num_attention_heads: vLLM refuses a tensor-parallel size that "
                                                    "does not divide it.")
    context_length: int | None = Field(default=None, ge=16, le=100_000_000, alias="contextLength",
                                       description="The model's derived maximum length (max_position_embeddings with "
                                                   "rope scaling, the tokenizer's cap): what an unset maxModelLen "
                                                   "means, and the most vLLM accepts.")
    model_type: str | None = Field(default=None, alias="modelType", pattern=r"^[a-z0-9_]{1,64}$",
                                   description="config.json model_type (gemma2, gemma3 and glm4 run in fp32 below "
                                               "compute capability 8.0).")
    hidden_size: int | None = Field(default=None, ge=1, le=1_000_000, alias="hiddenSize",
                                    description="hidden_size (activation estimate; a quantized model's 16-bit "
                                                "embeddings).")
    intermediate_size: int | None = Field(default=None, ge=1, le=10_000_000, alias="intermediateSize",
                                          description="intermediate_size (activation estimate).")
    vocab_size: int | None = Field(default=None, ge=1, le=10_000_000, alias="vocabSize",
                                   description="vocab_size (a quantized model's 16-bit embeddings and lm_head).")
    tie_word_embeddings: bool = Field(default=False, alias="tieWordEmbeddings",
                                      description="tie_word_embeddings: lm_head shares the embeddings.")

    def kv_bytes_per_token(self, tensor_parallel: int = 1) -> int:
        """K and V of every layer's KV heads for one token, over the replica's `tensor_parallel` GPUs together.

        Each GPU holds `max(1, kvHeads // TP)` KV heads: with fewer KV heads than GPUs vLLM replicates them so that
        every GPU holds one (`ModelConfig.get_num_kv_heads`, vllm/config/model.py:1683-1703 at v0.34.0,
        https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/config/model.py#L1683-L1703)."""
        heads = max(1, self.kv_heads // tensor_parallel) * tensor_parallel
        return 2 * self.layers * heads * self.head_dim * KV_BYTES[self.kv_cache_dtype]


class VllmConfig(_Model):
    """`inferenceServices[].vllm`: the model vLLM serves and how it fits its GPUs."""

    model_path: str = Field(
        alias="modelPath", min_length=1, pattern=r"^[A-Za-z0-9._/-]+$",
        description="The model directory (Hugging Face layout: config.json, *.safetensors, tokenizer) on the model "
                    "volume: relative to modelVolume.mountPath, or absolute.",
    )
    model: str | None = Field(
        default=None, min_length=3, max_length=250,
        description="The Hugging Face repository id of the model (owner/name, as the Hub writes it), whose shape, "
                    "weights and context the model catalog knows (docs/serving.md, \"Naming the model\"); values "
                    "declared here (modelGiB, parametersBillions, shape) override the catalog's.")
    served_model_name: str | None = Field(
        default=None, alias="servedModelName", pattern=r"^[A-Za-z0-9._/:-]{1,128}$",
        description="The model name clients send (--served-model-name); default: the last part of modelPath.",
    )
    max_model_len: int | None = Field(default=None, ge=-1, le=100_000_000, alias="maxModelLen",
                                      description="--max-model-len; unset: the model's own context length; -1: vLLM "
                                                  "fits it to the memory left (v0.14.0 and later).")
    gpu_memory_utilization: float | None = Field(
        default=None, gt=0, le=1, alias="gpuMemoryUtilization",
        description="--gpu-memory-utilization; unset: vLLM's default (1.0 with its extensible KV cache).")
    model_gib: float | None = Field(default=None, gt=0, le=100_000, alias="modelGiB",
                                    description="Size of the weights in GiB (what the GPUs must hold; the snapshot's "
                                                "size is the volume's, not the weights').")
    parameters_billions: float | None = Field(default=None, gt=0, le=100_000, alias="parametersBillions",
                                              description="Parameter count in billions, with precision, instead of "
                                                          "modelGiB.")
    precision: Precision = Field(
        default="bf16",
        description="Precision of the checkpoint's weights; counted at the dtype vLLM loads them in (fp32 "
                    "checkpoints load as bf16, or fp16 below compute capability 8.0: 2 bytes per parameter).")
    shape: ModelShapeConfig | None = Field(default=None, description="Model shape for the KV-cache check.")
    api_key_secret: SecretKeyConfig | None = Field(
        default=None, alias="apiKeySecret",
        description="Secret key holding the API key clients send as a Bearer token (VLLM_API_KEY).")
    usage_stats: bool = Field(
        default=False, alias="usageStats",
        description="true: let vLLM send its usage telemetry; default off (VLLM_NO_USAGE_STATS=1, DO_NOT_TRACK=1).")
    runner: Literal["generate", "pooling"] = Field(
        default="generate",
        description="generate: chat, completions and /v1/responses are routed; pooling: an embedding model, "
                    "/v1/embeddings is routed and the server runs with --runner pooling.")

    @field_validator("model")
    @classmethod
    def _known_form(cls, value: str | None) -> str | None:
        return None if value is None else check_model_id(value)

    @model_validator(mode="after")
    def _max_model_len(self) -> VllmConfig:
        if self.max_model_len is not None and self.max_model_len != -1 and self.max_model_len < 16:
            raise ConfigIssue("maxModelLen is a length of at least 16 tokens, or -1 (vLLM fits it to memory)",
                              value=self.max_model_len, path=("maxModelLen",),
                              fix="set maxModelLen to 16 or more, -1, or leave it unset (the model's context length)")
        return self

    @model_validator(mode="after")
    def _one_size(self) -> VllmConfig:
        if self.model_gib is not None and self.parameters_billions is not None:
            raise ConfigIssue("give the weights' size once: modelGiB, or parametersBillions with precision",
                              value=self.parameters_billions, path=("parametersBillions",),
                              fix="remove parametersBillions (modelGiB wins)")
        return self

    @property
    def weights_gib(self) -> float | None:
        """The weights' size in GiB: modelGiB, else parameters x bytes per parameter; None when not declared."""
        if self.model_gib is not None:
            return self.model_gib
        if self.parameters_billions is not None:
            return self.parameters_billions * 1e9 * BYTES_PER_PARAMETER[self.precision] / GIB
        return None

    def declared_facts(self) -> dict[str, object]:
        """What was declared of the model, in the keys serving-model-fits reads (policies/gpu_guard/model_fit.py
        `declared_model`): the config check and the Deployment's gpu-platform.io/model-shape annotation carry the
        same facts, so the pack and the config check judge the same model."""
        out: dict[str, object] = {"precision": self.precision}
        if self.model_gib is not None:
            out["modelGiB"] = self.model_gib
        if self.parameters_billions is not None:
            out["parametersBillions"] = self.parameters_billions
        if self.shape is not None:
            out.update(self.shape.model_dump(by_alias=True, exclude_none=True, exclude={"kv_cache_dtype"}))
        return out

    def served_name(self) -> str:
        return self.served_model_name or self.model_path.rstrip("/").rsplit("/", 1)[-1]


class OidcConfig(_Model):
    """`inferenceServices[].ingress.oidc`: the ALB authenticates every request with an OpenID Connect provider."""

    # For browsers only: the ALB's session is its AWSELBAuthSessionCookie cookie (aws-load-balancer-controller v3.5.0
    # pkg/ingress/auth_config_builder.go:12) and it validates no Bearer token, so OpenAI SDK clients of a vLLM service
    # need `vllm.apiKeySecret` (docs/serving.md, "Authentication").

    issuer: str = Field(pattern=r"^https://\S+$", description="The provider's issuer URL.")
    authorization_endpoint: str = Field(alias="authorizationEndpoint", pattern=r"^https://\S+$",
                                        description="Authorization endpoint URL.")
    token_endpoint: str = Field(alias="tokenEndpoint", pattern=r"^https://\S+$", description="Token endpoint URL.")
    user_info_endpoint: str = Field(alias="userInfoEndpoint", pattern=r"^https://\S+$",
                                    description="User info endpoint URL.")
    secret_name: ServiceName = Field(alias="secretName",
                                     description="Secret in the service's namespace with clientID and clientSecret.")
    on_unauthenticated: Literal["authenticate", "deny"] = Field(
        default="deny", alias="onUnauthenticatedRequest",
        description="deny (401 for API clients without a session), or authenticate (redirect browsers to log in).")
