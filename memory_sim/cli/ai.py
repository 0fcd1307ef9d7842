"""`memory-sim ai run MODEL --text ... [--json]` (Workers AI's run, locally) and `memory-sim models`.

Heavy libraries load inside the handlers, so `memory-sim --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: Any) -> None:
    ai = subparsers.add_parser("ai", help="run a local Workers AI embedding model")
    verbs = ai.add_subparsers(dest="ai_command", metavar="VERB", required=True)
    run = verbs.add_parser("run", help="embed texts, answering as env.AI.run does")
    run.add_argument("model", metavar="MODEL", help="'default', @cf/baai/bge-base-en-v1.5, "
                     "sentence-transformers/all-MiniLM-L6-v2 (alias all-MiniLM-L6-v2), or a model folder")
    run.add_argument("--text", action="append", required=True, help="a text to embed (repeat for several)")
    run.add_argument("--pooling", choices=("cls", "mean"), default=None,
                     help="pooling as Workers AI takes it (default: the model's own, cls for BGE)")
    run.add_argument("--json", action="store_true", help="print the full {shape, data, pooling} answer")
    run.set_defaults(handler=run_model)
    models = subparsers.add_parser("models", help="list embedding models, and whether each can run here")
    models.add_argument("--json", action="store_true", help="print JSON")
    models.set_defaults(handler=list_models)


def run_model(args: argparse.Namespace) -> int:
    from memory_sim.builder import open_ai
    from memory_sim.errors import AiError

    ai = open_ai(args.settings)
    locate = getattr(ai, "locate", None)  # a local model: its canonical name and own pooling
    found = locate(args.model) if locate is not None else None
    name = found.name if found is not None else args.model
    pooling = args.pooling or (found.pooling if found is not None else "cls")
    answer = ai.run(name, {"text": args.text, "pooling": pooling})
    if args.json:
        print(json.dumps({"model": name, **answer}))
        return 0
    if answer["shape"][0] != len(args.text):
        raise AiError("the model answered a different number of vectors than texts")
    print(f"model {name}  shape {answer['shape']}  pooling {answer['pooling']}")
    for text, vector in zip(args.text, answer["data"], strict=True):
        head = ", ".join(f"{x:+.4f}" for x in vector[:6])
        print(f"  [{head}, ...]  {text[:60]!r}")
    return 0


def list_models(args: argparse.Namespace) -> int:
    from memory_sim.builder.models import BGE_BASE, default_model, fallback_note, model_statuses

    statuses = model_statuses()
    default = default_model()
    if args.json:
        rows = [{**vars(s), "default": s.name == default} for s in statuses]
        print(json.dumps(rows))
        return 0
    for status in statuses:
        mark = "yes" if status.available else "no "
        width = f"{status.dimensions}-d" if status.dimensions else "?"
        tag = "  (default)" if status.name == default else ""
        print(f"{mark}  {status.name:42} {width:7}{tag}\n     {status.detail}")
    if default != BGE_BASE:
        print(f"\n{fallback_note()}")
    return 0
