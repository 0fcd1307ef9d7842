"""Tiny random-weight folders of the catalogue models' own architectures, built offline in seconds: EmbeddingGemma
(a Gemma 3 text model, mean pooling, two Dense projections to 768, Normalize), Qwen3-Embedding (a Qwen3 model of
hidden size 1024, last-token pooling, Normalize) and bge-reranker-base (a one-label sequence classifier). Their
tokenizer is a word-level one over a small vocabulary, so the embedding tables stay small."""

from __future__ import annotations

from pathlib import Path

WORDS = ("the miller wheel turns at dawn bread baker ada tom inn ale river stone mill flour sold tax rain "
         "where who what is was").split()


def _tokenizer(folder: Path, bos: str, eos: str) -> int:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {word: i for i, word in enumerate(["<pad>", "<unk>", bos, eos, *WORDS])}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()  # type: ignore[assignment]
    tokenizer.post_processor = processors.TemplateProcessing(  # type: ignore[assignment]
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} $B {eos}", special_tokens=[(bos, 2), (eos, 3)])
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", unk_token="<unk>", bos_token=bos,
                            eos_token=eos, model_max_length=128).save_pretrained(folder)
    return len(vocab)


def build_embeddinggemma(folder: Path) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as st
    from transformers import Gemma3TextConfig, Gemma3TextModel

    torch.manual_seed(0)
    hf = folder / "hf"
    vocab = _tokenizer(hf, "<bos>", "<eos>")
    config = Gemma3TextConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=128,
                              sliding_window=64, pad_token_id=0, bos_token_id=2, eos_token_id=3)
    Gemma3TextModel(config).save_pretrained(hf)
    identity = torch.nn.Identity()
    modules = [st.Transformer(str(hf), max_seq_length=128), st.Pooling(32, pooling_mode="mean"),
               st.Dense(32, 64, bias=False, activation_function=identity),
               st.Dense(64, 768, bias=False, activation_function=identity), st.Normalize()]
    prompts = {"query": "task: search result | query: ", "document": "title: none | text: "}
    SentenceTransformer(modules=modules, device="cpu", prompts=prompts).save(str(folder / "model"))
    return folder / "model"


def build_qwen3_embedding(folder: Path) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as st
    from transformers import Qwen3Config, Qwen3Model

    torch.manual_seed(0)
    hf = folder / "hf"
    vocab = _tokenizer(hf, "<|im_start|>", "<|endoftext|>")
    config = Qwen3Config(vocab_size=vocab, hidden_size=1024, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=16, num_key_value_heads=8, head_dim=64, max_position_embeddings=256,
                         pad_token_id=0, tie_word_embeddings=True)
    Qwen3Model(config).save_pretrained(hf)
    modules = [st.Transformer(str(hf), max_seq_length=128), st.Pooling(1024, pooling_mode="lasttoken"),
               st.Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder / "model"))
    return folder / "model"


def build_reranker(folder: Path) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    vocab = _tokenizer(folder, "[CLS]", "[SEP]")
    config = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=1, pad_token_id=0)
    BertForSequenceClassification(config).save_pretrained(folder)
    return folder
