"""Providers under hostile endpoints (issue #13): a server that drips one byte at a time, one
that answers 429 with Retry-After, one that answers hundreds of megabytes — each against the
real local OpenAI-compatible server in tests/openai_server.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.providers.embedding import EmbeddingError, OpenAIEmbedder
from vault_engine.providers.http import retry_after
from vault_engine.providers.llm import ChatClient, LLMError, LLMSettings

from .openai_server import FakeOpenAI

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def chat(url: str, *, timeout_s: float = 10.0, retries: int = 0,
         max_bytes: int = 16 * 1024 * 1024) -> ChatClient:
    return ChatClient(LLMSettings(provider="openai", base_url=url, model="m", api_key=None,
                                  timeout_s=timeout_s, max_retries=retries,
                                  daily_call_budget=10, max_response_bytes=max_bytes),
                      backoff_s=0.0)


def test_a_dripping_server_meets_the_deadline_of_the_whole_call() -> None:
    with FakeOpenAI() as srv:
        srv.drip_s = 0.25  # ~50 bytes: 12 s to finish, never 0.25 s without a byte
        srv.faults.append("drip")
        start = time.monotonic()
        with pytest.raises(LLMError) as err:
            chat(srv.url, timeout_s=1.0).complete([{"role": "user", "content": "hi"}])
        elapsed = time.monotonic() - start
    assert "timed out" in err.value.message and "whole call" in err.value.message
    assert elapsed < 6.0  # the deadline, not the 12 s the drip would take


def test_retry_after_is_honoured_and_capped() -> None:
    with FakeOpenAI() as srv:
        srv.faults.append("retry-after:1")
        srv.completions.append('{"cards": []}')
        assert chat(srv.url, retries=1).complete([{"role": "user", "content": "x"}]) \
            == '{"cards": []}'
        first, second = srv.requests[0]["at"], srv.requests[1]["at"]
        assert second - first >= 0.9  # waited as asked (backoff alone would be 0 s here)
        srv.faults.append("retry-after:3600")
        with pytest.raises(LLMError) as err:
            chat(srv.url, retries=3).complete([{"role": "user", "content": "x"}])
        assert "asked to retry after 3600s" in err.value.message
        assert len(srv.requests) == 3  # no retry was made against the hour-long wait


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    assert 59 <= (retry_after({"retry-after": "Wed, 21 Oct 2015 07:29:00 GMT"},
                              now=1445412480.0) or 0) <= 61


@pytest.mark.parametrize("fault", ["huge", "huge-announced"])
def test_a_huge_answer_is_refused_unread(fault: str) -> None:
    with FakeOpenAI() as srv:
        srv.faults.append(fault)
        with pytest.raises(LLMError) as err:
            chat(srv.url).complete([{"role": "user", "content": "x"}])
        assert "more than 16,777,216 bytes" in err.value.message
        assert srv.sent_bytes < 100 * 1024 * 1024  # of the 300 MB it meant to send


def test_the_embedder_has_the_same_guards() -> None:
    with FakeOpenAI() as srv:
        srv.huge_bytes = 4 * 1024 * 1024
        srv.faults.append("huge")
        emb = OpenAIEmbedder(srv.url, "m", max_retries=0, max_response_bytes=1024 * 1024)
        with pytest.raises(EmbeddingError, match="more than 1,048,576 bytes"):
            emb.embed_passages(["a"])
        srv.faults.append("drip")
        srv.drip_s = 0.2
        slow = OpenAIEmbedder(srv.url, "m", max_retries=0, timeout_s=0.8)
        with pytest.raises(EmbeddingError, match="timed out"):
            slow.embed_passages(["a"])


def test_distill_gives_up_on_a_drip_and_keeps_the_session_pending(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "v"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(vault)]).exit_code == 0
    toml = vault / "alaya.toml"
    toml.write_text(toml.read_text().replace("timeout_s = 120.0", "timeout_s = 1.0")
                    .replace("max_retries = 2", "max_retries = 0"))
    assert runner.invoke(cli, ["--vault", str(vault), "ingest",
                               str(EXAMPLES / "session-20260331-062900.json")]).exit_code == 0
    with FakeOpenAI() as srv:
        srv.drip_s = 0.3
        srv.faults.append("drip")
        monkeypatch.setenv("ALAYA_LLM_BASE_URL", srv.url)
        result = runner.invoke(cli, ["--vault", str(vault), "distill"])
    assert result.exit_code == 1 and "timed out" in result.output
    assert "stays pending" in result.output
    assert not list((vault / "cards").rglob("*.md"))
