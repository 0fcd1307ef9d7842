"""A small real HTTP server on 127.0.0.1 that speaks Workers AI's REST run endpoint and OpenAI's embeddings API,
with scripted failures (429, 500) queued ahead of normal answers. Clients under test use real httpx / the SDK."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memory_sim.bindings.ai_validation import parse_inputs
from memory_sim.embedding.fake import HashingEmbedder
from memory_sim.errors import AiError


@dataclass
class Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeApi:
    width: int = 8
    failures: list[Scripted] = field(default_factory=list)  # answered first, in order
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Scripted:
        self.requests.append((path, headers, body))
        if self.failures:
            return self.failures.pop(0)
        if path == "/v1/embeddings":
            return self._openai(body)
        if "/ai/run/" in path:
            return self._workers_ai(body)
        return Scripted(404, {"error": "not found"})

    def _workers_ai(self, body: dict[str, Any]) -> Scripted:
        try:
            texts, pooling = parse_inputs(body)
        except AiError as exc:
            return Scripted(400, {"errors": [{"message": str(exc), "code": 5006}], "success": False, "result": {}})
        vectors = HashingEmbedder(self.width).embed(texts) * 2.0
        result = {"shape": [len(texts), self.width], "data": vectors.tolist(), "pooling": pooling}
        return Scripted(200, {"result": result, "success": True, "errors": [], "messages": []})

    def _openai(self, body: dict[str, Any]) -> Scripted:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        width = body.get("dimensions", self.width)
        vectors = HashingEmbedder(width).embed(texts)
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        data.reverse()  # the client must order by index, not by position
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        return Scripted(200, {"object": "list", "data": data, "model": body["model"], "usage": usage})


def serve(api: FakeApi) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            reply = api.answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            payload = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
