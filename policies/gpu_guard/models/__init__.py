"""The model catalog: `vllm.model: <Hugging Face repo id>` names a model whose shape the platform knows.

catalog.yaml lists the models; configs/ holds each one's config.json as read; derive.py turns a config.json into
`ModelFacts` (facts.py), whose `weight_bytes()` counts the weights by tensor class.
"""

from .catalog import CatalogError, all_models, close_matches, lookup
from .facts import ModelFacts, TensorGroup

__all__ = ["CatalogError", "ModelFacts", "TensorGroup", "all_models", "close_matches", "lookup"]
