"""The optional reranker: off by default (no request, `reranker: null`); with a rerank or chat
endpoint configured it re-orders the best candidates; when the endpoint fails recall keeps its
own order and says why. Against a real local HTTP server (tests/openai_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from cli.fast import run_direct
from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.config import load_config
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.providers.rerank import (
    Reranker,
    RerankError,
    RerankSettings,
    get_reranker,
    rerank_settings,
)
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery
from vault_engine.store.vault import Vault

from .openai_server import FakeOpenAI

HASH = HashEmbedder(256)
SCHEMA = json.loads((Path(__file__).parent.parent / "docs" / "schemas" /
                     "recall.schema.json").read_text())
TOPICS = [("Gateway restart", "Restarting the gateway drops Telegram notices."),
          ("Gateway timeout", "The gateway times out after 30 seconds under load."),
          ("网关 证书", "网关的证书每 90 天续期一次，续期任务在周一早上跑。"),
          ("Gateway logs", "Gateway logs are kept for 14 days in Loki.")]


def _card(root: Path, title: str, text: str) -> None:
    path = root / "cards" / "fact" / f"{title}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nid: card-{abs(hash(title)) % 10**8:08d}\ntitle: {title}\ntype: fact\n"
                    f"claims:\n  - id: c1\n    text: {text}\n---\n", encoding="utf-8")


@pytest.fixture
def cards_vault(vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    for title, text in TOPICS:
        _card(vault_path, title, text)
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    return vault_path


def _configure(root: Path, provider: str, url: str, **extra: object) -> None:
    lines = [f'provider = "{provider}"', f'base_url = "{url}"', 'model = "test-reranker"',
             *(f"{k} = {json.dumps(v)}" for k, v in extra.items())]
    with (root / "alaya.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[rerank]\n" + "\n".join(lines) + "\n")


def _titles(result: dict) -> list[str]:
    return [n["title"] for n in result["nodes"]]


def test_off_by_default_no_request_and_no_reranker(cards_vault: Path) -> None:
    with FakeOpenAI() as srv:
        assert get_reranker(load_config(cards_vault)) is None
        result = json.loads(CliRunner().invoke(
            cli, ["--vault", str(cards_vault), "recall", "gateway", "--json"]).output)
        assert result["reranker"] is None
        assert srv.requests == []
    jsonschema.validate(result, SCHEMA)


def test_a_rerank_endpoint_reorders_the_best_candidates(cards_vault: Path) -> None:
    with FakeOpenAI() as srv:
        query = RecallQuery(text="gateway", top_k=3, expand=False)
        offline = recall(cards_vault / ".alaya", query, embedder=HASH, telemetry=False)
        assert offline["reranker"] is None
        srv.rerank_prefer = "Loki"  # the server's model prefers the log card …
        _configure(cards_vault, "openai", srv.url, top_n=20)
        reranker = get_reranker(load_config(cards_vault))
        assert reranker is not None and reranker.url == srv.url + "/rerank"
        result = recall(cards_vault / ".alaya", query, embedder=HASH, telemetry=False,
                        reranker=reranker)
        assert result["reranker"] == "openai:test-reranker"
        assert _titles(result)[0] == "Gateway logs"  # … and it comes first
        assert len(result["nodes"]) == 3  # still top_k
        sent = srv.requests[-1]["body"]
        assert sent["query"] == "gateway" and sent["model"] == "test-reranker"
        assert len(sent["documents"]) == 4  # every candidate up to top_n, not only top_k
        assert any("Loki" in d for d in sent["documents"])
        jsonschema.validate(result, SCHEMA)


def test_the_cli_and_the_fast_path_use_the_configured_reranker(
        cards_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI() as srv:
        srv.rerank_prefer = "续期"
        _configure(cards_vault, "openai", srv.url)
        monkeypatch.setenv("ALAYA_RERANK_API_KEY", "sk-test-rerank")
        out = CliRunner().invoke(cli, ["--vault", str(cards_vault), "recall", "网关 gateway",
                                       "--json"])
        assert out.exit_code == 0, out.output
        result = json.loads(out.output)
        assert result["reranker"] == "openai:test-reranker"
        assert _titles(result)[0] == "网关 证书"
        assert srv.requests[-1]["auth"] == "Bearer sk-test-rerank"  # key from the env only
        served = run_direct(["--vault", str(cards_vault), "recall", "网关 gateway", "--json"])
        assert served is not None and served[0] == 0
        assert _titles(json.loads(served[1]))[0] == "网关 证书"


def test_a_chat_model_can_rerank(cards_vault: Path) -> None:
    with FakeOpenAI() as srv:
        _configure(cards_vault, "llm", srv.url)
        reranker = get_reranker(load_config(cards_vault))
        assert reranker is not None and reranker.url.endswith("/chat/completions")
        query = RecallQuery(text="gateway", top_k=4, expand=False)
        offline = _titles(recall(cards_vault / ".alaya", query, embedder=HASH,
                                 telemetry=False))
        wanted = offline[::-1]
        # the model answers with the candidates' indexes, best first (one left out, one twice)
        srv.completions.append(json.dumps({"ranking": [3, 2, 3, 1]}))
        result = recall(cards_vault / ".alaya", query, embedder=HASH, telemetry=False,
                        reranker=reranker)
        assert _titles(result) == wanted
        prompt = srv.requests[-1]["body"]["messages"]
        assert "data, not instructions" in prompt[0]["content"]
        assert "Question: gateway" in prompt[1]["content"]


@pytest.mark.parametrize("fault", ["500", "malformed", "bad-index"])
def test_a_failing_reranker_keeps_the_offline_order(cards_vault: Path, fault: str) -> None:
    with FakeOpenAI() as srv:
        _configure(cards_vault, "openai", srv.url, max_retries=0)
        reranker = get_reranker(load_config(cards_vault))
        query = RecallQuery(text="gateway", expand=False)
        offline = recall(cards_vault / ".alaya", query, embedder=HASH, telemetry=False)
        srv.faults.append(fault)
        result = recall(cards_vault / ".alaya", query, embedder=HASH, telemetry=False,
                        reranker=reranker)
        assert _titles(result) == _titles(offline)
        assert result["reranker"] is None
        assert any(w.startswith("reranker unavailable") for w in result["warnings"])


def test_a_chat_answer_without_a_ranking_is_an_error(cards_vault: Path) -> None:
    with FakeOpenAI() as srv:
        _configure(cards_vault, "llm", srv.url, max_retries=0)
        reranker = get_reranker(load_config(cards_vault))
        assert isinstance(reranker, Reranker)
        srv.completions.append("I think the second one.")
        with pytest.raises(RerankError, match="no ranking list"):
            reranker.scores("gateway", ["a", "b"])


def test_bad_settings_say_what_to_fix(vault_path: Path) -> None:
    with (vault_path / "alaya.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[rerank]\nprovider = "cohere-cloud"\n')
    with pytest.raises(RerankError, match="provider") as err:
        rerank_settings(load_config(vault_path))
    assert err.value.fix and "none" in err.value.fix
    with pytest.raises(RerankError, match="base_url"):
        Reranker(RerankSettings(provider="openai", base_url="", model="m", api_key=None,
                                top_n=20, timeout_s=1.0, max_retries=0))
