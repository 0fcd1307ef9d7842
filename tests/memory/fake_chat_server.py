"""A tiny OpenAI-compatible chat server on loopback (http.server in a thread), for ChatSummariser's tests: it
answers `POST /v1/chat/completions` in the API's shape, or fails the way a real server can (`behaviour`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[dict[str, Any]]], str]


class FakeChatServer:
    """`with FakeChatServer(reply) as server: server.base_url` -> "http://127.0.0.1:PORT/v1".

    `behaviour`: "ok" (the API's answer with `reply(messages)` as content), "error" (HTTP 500), "slow" (answers
    after `delay_s`), "bad-json", "no-choices", "unauthorized" (401 unless the bearer token is `api_key`)."""

    def __init__(self, reply: Reply, *, api_key: str | None = None, delay_s: float = 2.0) -> None:
        self.reply, self.api_key, self.delay_s = reply, api_key, delay_s
        self.behaviour = "ok"
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-chat", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, path: str, headers: Any, body: dict[str, Any]) -> tuple[int, bytes]:
        if path != "/v1/chat/completions":
            return 404, b'{"error": {"message": "not found"}}'
        if self.api_key is not None and headers.get("Authorization") != f"Bearer {self.api_key}":
            return 401, b'{"error": {"message": "invalid api key"}}'
        self.requests.append(body)
        if self.behaviour == "error":
            return 500, b'{"error": {"message": "model crashed"}}'
        if self.behaviour == "slow":
            time.sleep(self.delay_s)
        if self.behaviour == "bad-json":
            return 200, b"<html>proxy error</html>"
        if self.behaviour == "no-choices":
            return 200, b'{"choices": []}'
        answer = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": self.reply(body["messages"])}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        return 200, json.dumps(answer).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                status, payload = server._answer(self.path, self.headers, json.loads(self.rfile.read(length) or b"{}"))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): as a real server sees it

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
