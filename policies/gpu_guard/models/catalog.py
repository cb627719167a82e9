"""The model catalog: catalog.yaml (provenance and published figures) plus each model's vendored config.json.

Each row names a Hugging Face repository, where its config.json was read (a GitHub copy at a pinned commit, since
the catalog is built offline) and the sha256 of the vendored copy under configs/. Every fact of the row is derived
from that file by derive.py when the catalog loads; nothing of the shape is written by hand, so a row cannot drift
from its source. The loader refuses a row whose file is missing or whose sha256 differs, with the file, the row and
the key in the message.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .derive import ConfigShapeError, Provenance, derive_facts
from .facts import ModelFacts

MODELS_DIR = Path(__file__).resolve().parent
CATALOG_PATH = MODELS_DIR / "catalog.yaml"
CONFIGS_DIR = MODELS_DIR / "configs"
# A Hugging Face repository id: owner/name, each of letters, digits, '-', '_' and '.', at most 96 characters
# (huggingface_hub `validate_repo_id`: https://github.com/huggingface/huggingface_hub/blob/v0.26.0/src/
# huggingface_hub/utils/_validators.py#L124-L167); an optional @revision (a branch, tag or commit) after it.
REPO_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_REQUIRED_ROW_KEYS = ("repo_id", "config", "sha256", "read_from", "license", "reviewed")


class CatalogError(ValueError):
    """catalog.yaml or a vendored config.json is wrong; the message names the file, the row and the key."""


@dataclass(frozen=True)
class CatalogRow:
    """A catalog.yaml row: provenance and the published figures the derived facts are checked against."""

    repo_id: str
    revision: str | None
    config: str
    sha256: str
    read_from: dict[str, str]
    license: str
    reviewed: str
    published_parameters: int | None
    published_source: str | None
    safetensors_total_size: int | None
    total_size_source: str | None
    notes: str | None

    @property
    def source_url(self) -> str:
        src = self.read_from
        if "url" in src:
            return src["url"]
        return f"https://github.com/{src['repo']}/blob/{src['commit']}/{src['path']}"


def _row(raw: Any, index: int) -> CatalogRow:
    where = f"{CATALOG_PATH.name} models[{index}]"
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: a row is a mapping, got {type(raw).__name__}")
    where += f" ({raw.get('repo_id', '?')})"
    for key in _REQUIRED_ROW_KEYS:
        if not raw.get(key):
            raise CatalogError(f"{where}: {key} is required (every row says where its config.json was read)")
    source = raw["read_from"]
    if isinstance(source, dict) and str(source.get("url", "")).startswith("https://huggingface.co/"):
        if not raw.get("notes"):
            raise CatalogError(f"{where}: a config read from a rendered Hub page needs notes saying how its layout "
                               "was rebuilt")
    elif not isinstance(source, dict) or not all(source.get(k) for k in ("repo", "commit", "path")):
        raise CatalogError(f"{where}: read_from needs repo, commit and path (a GitHub copy) or the url of a "
                           f"huggingface.co page, got {source!r}")
    elif not re.fullmatch(r"[0-9a-f]{40}", str(source["commit"])):
        raise CatalogError(f"{where}: read_from.commit {source['commit']!r} is not a pinned 40-hex commit")
    if not REPO_ID_PATTERN.match(str(raw["repo_id"])):
        raise CatalogError(f"{where}: repo_id {raw['repo_id']!r} is not a Hugging Face owner/name")
    return CatalogRow(
        repo_id=str(raw["repo_id"]), revision=raw.get("revision"), config=str(raw["config"]),
        sha256=str(raw["sha256"]), read_from={k: str(v) for k, v in source.items()}, license=str(raw["license"]),
        reviewed=str(raw["reviewed"]), published_parameters=raw.get("published_parameters"),
        published_source=raw.get("published_source"), safetensors_total_size=raw.get("safetensors_total_size"),
        total_size_source=raw.get("total_size_source"), notes=raw.get("notes"),
    )


def parse_rows(text: str) -> list[CatalogRow]:
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise CatalogError(f"{CATALOG_PATH.name}: a top-level 'models' list is required")
    rows = [_row(raw, i) for i, raw in enumerate(data["models"])]
    seen: set[str] = set()
    for row in rows:
        if row.repo_id in seen:
            raise CatalogError(f"{CATALOG_PATH.name}: {row.repo_id} is listed twice")
        seen.add(row.repo_id)
    return rows


def facts_of(row: CatalogRow, configs_dir: Path = CONFIGS_DIR) -> ModelFacts:
    """The row's facts, derived from its vendored config.json after checking the file's sha256."""
    where = f"{CATALOG_PATH.name} ({row.repo_id}) config {row.config}"
    path = configs_dir / row.config
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CatalogError(f"{where}: cannot read {path}: {exc.strerror}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != row.sha256:
        raise CatalogError(f"{where}: sha256 {digest} differs from the recorded {row.sha256}: the vendored file "
                           "changed; config.json files are kept byte for byte as read")
    try:
        cfg = json.loads(raw)
        return derive_facts(cfg, Provenance(row.repo_id, row.revision, row.source_url, digest, row.config))
    except (ValueError, ConfigShapeError) as exc:
        raise CatalogError(f"{where}: {exc}") from exc


_LOCK = threading.Lock()
_CACHE: dict[str, ModelFacts] = {}


def _catalog() -> dict[str, ModelFacts]:
    with _LOCK:
        if not _CACHE:
            rows = parse_rows(CATALOG_PATH.read_text(encoding="utf-8"))
            _CACHE.update({row.repo_id: facts_of(row) for row in rows})
        return _CACHE


def all_models() -> tuple[ModelFacts, ...]:
    """Every catalog model, in catalog.yaml's order."""
    return tuple(_catalog().values())


def lookup(repo_id: str) -> ModelFacts | None:
    """The catalog's facts for a Hugging Face repository id (case-sensitive, as the Hub's ids are written), or None.

    `owner/name@revision` is accepted: it finds the row only when the catalog pinned that revision (a commit id, or
    at least its first 7 characters); a row read at another, or an unknown, revision is not those facts."""
    name, _, revision = repo_id.partition("@")
    facts = _catalog().get(name)
    if facts is None or not revision:
        return facts
    if facts.revision and len(revision) >= 7 and facts.revision.startswith(revision):
        return facts
    return None


def close_matches(repo_id: str, limit: int = 3) -> list[str]:
    """Catalog ids nearest to `repo_id` (the same id in another case first), for a "did you mean" hint."""
    name = repo_id.partition("@")[0]
    ids = list(_catalog())
    same = [i for i in ids if i.lower() == name.lower() and i != name]
    near = difflib.get_close_matches(name, ids, n=limit, cutoff=0.6)
    return list(dict.fromkeys(same + near))[:limit]
