"""Where the weights of Workers AI's newer text models are on this machine (bindings/ai_models.py's catalogue), and
which of them this project runs locally. Never downloaded; never a substitute: a model whose weights are not here
fails with one line naming the setting that points at them, as BGE base does.

- `@cf/baai/bge-m3`: `$MEMORY_SIM_BGE_M3_PATH` or the Hugging Face cache (BAAI/bge-m3); run here: its dense
  embedding is the CLS token, L2-normalised, which the local encoders compute.
- `@cf/baai/omni-bge-base-en-v1.5`: bge-base's own weights (`$MEMORY_SIM_BGE_PATH`, as `@cf/baai/bge-base-en-v1.5`);
  run here with the pooling asked for.
- `@cf/google/embeddinggemma-300m` (`$MEMORY_SIM_EMBEDDINGGEMMA_PATH`), `@cf/qwen/qwen3-embedding-0.6b`
  (`$MEMORY_SIM_QWEN3_EMBEDDING_PATH`), `@cf/baai/bge-reranker-base` (`$MEMORY_SIM_BGE_RERANKER_PATH`), or the
  Hugging Face cache: run whole by sentence-transformers (sentence_models), since the local encoders lack their
  Dense projections, last-token pooling and pair scoring.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from memory_sim.bindings.ai_models import (
    BGE_M3,
    BGE_RERANKER,
    CATALOGUE,
    EMBEDDINGGEMMA,
    OMNI_BGE,
    QWEN3_EMBEDDING,
    ModelSpec,
)
from memory_sim.errors import ConfigError
from memory_sim.local.ai.models import (
    LocalModel,
    ModelStatus,
    bge_dir,
    hf_snapshot,
    is_model_folder,
    read_folder,
    read_json,
)

# What the folder's transformers config.json must say, so that another model's folder is refused rather than run
# in its place: its model_type, or (the reranker) an architecture with a scoring head.
MODEL_TYPES = {EMBEDDINGGEMMA: "gemma3_text", QWEN3_EMBEDDING: "qwen3"}
SCORING_HEAD = "ForSequenceClassification"


def missing(spec: ModelSpec) -> str:
    """One line: the model's weights are not here, and the setting that points at them."""
    return (f"the weights of {spec.name} ({spec.hf_id}) are not on this machine and are never downloaded at run "
            f"time: point ${spec.path_env} at a sentence-transformers folder of {spec.hf_id}, or put it in the "
            "Hugging Face cache")


def locate_catalogue_model(
    name: str, model_dirs: Mapping[str, Path] | None = None, environ: Mapping[str, str] | None = None
) -> LocalModel:
    """The folder of a catalogue model's weights, checked for its width; ConfigError (one line) when they are not
    here, or hold a model of another width."""
    spec = CATALOGUE[name]
    env = os.environ if environ is None else environ
    folder = bge_dir(model_dirs, env) if name == OMNI_BGE else _folder(spec, model_dirs, env)
    if folder is None:
        raise ConfigError(missing(spec))
    _check_kind(spec, folder)
    found = read_folder(name, folder)
    if spec.dimensions is not None and found.dimensions not in (None, spec.dimensions):
        raise ConfigError(f"{folder} is configured for {name} but holds a {found.dimensions}-d model, not "
                          f"{spec.hf_id} ({spec.dimensions}-d)")
    pooling = "cls" if name == BGE_M3 else found.pooling
    width = None if spec.dimensions is None else found.dimensions or spec.dimensions  # a reranker has no width
    return LocalModel(name, folder, pooling, width, found.max_seq_length)


def _check_kind(spec: ModelSpec, folder: Path) -> None:
    config = read_json(folder / "config.json")
    if spec.name in MODEL_TYPES and config.get("model_type") != MODEL_TYPES[spec.name]:
        raise ConfigError(f"{folder} is configured for {spec.name} but holds a {config.get('model_type')!r} model, "
                          f"not {spec.hf_id} ({MODEL_TYPES[spec.name]!r})")
    architectures = config.get("architectures") or []
    if spec.name == BGE_RERANKER and not any(str(a).endswith(SCORING_HEAD) for a in architectures):
        raise ConfigError(f"{folder} is configured for {spec.name} but holds no cross-encoder (its config.json names "
                          f"no *{SCORING_HEAD} architecture: {architectures}), not {spec.hf_id}")


def _folder(spec: ModelSpec, model_dirs: Mapping[str, Path] | None, env: Mapping[str, str]) -> Path | None:
    for configured in ((model_dirs or {}).get(spec.name), env.get(spec.path_env)):
        if configured:
            folder = Path(configured)
            if not is_model_folder(folder):
                raise ConfigError(f"{folder} is configured for {spec.name} (${spec.path_env}) but holds no "
                                  "sentence-transformers model")
            return folder
    return hf_snapshot(spec.hf_id, env)


def catalogue_statuses(environ: Mapping[str, str] | None = None) -> list[ModelStatus]:
    """What `memory-sim models` lists for the catalogue's embedding models: usable here or not, and where or why."""
    statuses = []
    for spec in CATALOGUE.values():
        if spec.dimensions is None:
            continue  # the reranker embeds nothing: no index can be filled with it
        try:
            found = locate_catalogue_model(spec.name, environ=environ)
            statuses.append(ModelStatus(spec.name, found.dimensions, True, str(found.path)))
        except ConfigError as exc:
            statuses.append(ModelStatus(spec.name, spec.dimensions, False, str(exc)))
    return statuses
