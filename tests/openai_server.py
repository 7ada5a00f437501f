"""A real local HTTP server speaking the OpenAI embeddings (and chat) API and the rerank API
that vLLM, llama.cpp server and Jina/Cohere serve, with scripted faults."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from vault_engine.providers.embedding import HashEmbedder


class FakeOpenAI:
    """`with FakeOpenAI() as srv:` → `srv.url` is `http://127.0.0.1:PORT/v1`.

    `srv.faults` is a queue of behaviours for the next requests: "500", "429", "timeout",
    "malformed", "short" (fewer vectors than inputs), "bad-index" (a rerank result pointing
    past the documents), "drip" (a valid answer sent one byte
    every `drip_s`: never a read timeout, always too slow), "retry-after:N" (429 with
    `Retry-After: N`), "huge" (an answer of `huge_bytes` streamed without a Content-Length)
    and "huge-announced" (a Content-Length of `huge_bytes`, then the same stream). Requests
    are recorded in `srv.requests`, with the monotonic time each arrived.

    `POST …/rerank` scores each document by its cosine to the query (the hash embedder);
    a document containing `srv.rerank_prefer` scores 1 more, so a test can name the winner.
    """

    def __init__(self, dim: int = 64, sleep_s: float = 2.0) -> None:
        self.drip_s = 2.0
        self.huge_bytes = 300 * 1024 * 1024
        self.sent_bytes = 0  # what the last "huge" answer managed to send before the client quit
        self.embedder = HashEmbedder(dim)
        self.faults: deque[str] = deque()
        self.completions: deque[str] = deque()  # scripted chat answers, in order
        self.rerank_prefer: str | None = None
        self.requests: list[dict[str, Any]] = []
        self.sleep_s = sleep_s
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer.lock:
                    outer.requests.append({"path": self.path, "body": body,
                                           "auth": self.headers.get("Authorization"),
                                           "at": time.monotonic()})
                    fault = outer.faults.popleft() if outer.faults else None
                if fault == "timeout":
                    time.sleep(outer.sleep_s)
                if fault in ("500", "429"):
                    return self._send(int(fault), {"error": {"message": "scripted failure"}})
                if fault and fault.startswith("retry-after:"):
                    return self._send(429, {"error": {"message": "slow down"}},
                                      extra={"Retry-After": fault.split(":", 1)[1]})
                if fault == "drip":
                    return self._drip()
                if fault in ("huge", "huge-announced"):
                    return self._huge(announced=fault == "huge-announced")
                if fault == "malformed":
                    return self._send(200, None, raw=b"{not json")
                if self.path.endswith("/chat/completions"):
                    with outer.lock:
                        content = outer.completions.popleft() if outer.completions else \
                            '{"cards": [], "links": []}'
                    return self._send(200, {"id": "chatcmpl-test", "object": "chat.completion",
                                            "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant",
                                                                     "content": content}}]})
                if self.path.endswith("/rerank"):
                    return self._rerank(body, fault)
                inputs = body.get("input") or []
                if isinstance(inputs, str):
                    inputs = [inputs]
                vecs = outer.embedder.embed_passages(inputs)
                if fault == "short":
                    vecs = vecs[:-1]
                data = [{"object": "embedding", "index": i, "embedding": v.tolist()}
                        for i, v in enumerate(vecs)]
                self._send(200, {"object": "list", "data": data, "model": body.get("model")})

            def _rerank(self, body: dict[str, Any], fault: str | None) -> None:
                docs = [str(d) for d in body.get("documents") or []]
                q = outer.embedder.embed_query(str(body.get("query", "")))
                scores = [float(v @ q) for v in outer.embedder.embed_passages(docs)] \
                    if docs else []
                prefer = outer.rerank_prefer
                results = [{"index": i, "relevance_score": s + (1.0 if prefer and prefer in d
                                                                else 0.0)}
                           for i, (s, d) in enumerate(zip(scores, docs, strict=True))]
                results.sort(key=lambda r: -r["relevance_score"])
                if fault == "bad-index" and results:
                    results[0]["index"] = len(docs) + 5
                self._send(200, {"model": body.get("model"), "results":
                                 results[:int(body.get("top_n") or len(results))]})

            def _drip(self) -> None:
                payload = json.dumps({"choices": [{"message": {"content": "{}"}}]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    for i in range(len(payload)):
                        self.wfile.write(payload[i:i + 1])
                        self.wfile.flush()
                        time.sleep(outer.drip_s)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _huge(self, announced: bool) -> None:
                chunk = b"x" * 65536
                outer.sent_bytes = 0
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if announced:
                        self.send_header("Content-Length", str(outer.huge_bytes))
                    self.end_headers()
                    while outer.sent_bytes < outer.huge_bytes:
                        self.wfile.write(chunk)
                        outer.sent_bytes += len(chunk)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass
                self.close_connection = True

            def _send(self, status: int, obj: Any, raw: bytes | None = None,
                      extra: dict[str, str] | None = None) -> None:
                payload = raw if raw is not None else json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in (extra or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
