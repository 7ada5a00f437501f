"""Graph expansion that earns its place (issue 18): a question asking "why" weights the
nodes expansion reaches along CAUSED_BY, and introspect joins a symptom session to the
session of its cause — so the cause, which the question's own words do not find, is in the
top 3. Real vaults in tmp_path: sessions ingested, distilled with the offline rules,
consolidated, compiled; English and Chinese."""

from __future__ import annotations

import json
from pathlib import Path

from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.care.introspect.runner import introspect
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.expansion import goes_as_asked
from vault_engine.recall.intent import query_relation
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.sessions.distill import distill
from vault_engine.sessions.ingest import ingest, read_inputs
from vault_engine.store.init_vault import init_vault
from vault_engine.store.vault import Vault

HASH = HashEmbedder(256)
DAY = 86_400_000


def build(tmp_path: Path, sessions: dict[str, list[str]]) -> Vault:
    """A vault of these sessions (user first, then the assistant), one a day, consolidated."""
    files = []
    for i, (sid, turns) in enumerate(sessions.items()):
        ts = 1_777_000_000_000 + i * DAY
        data = {"id": sid, "timestamp": ts, "channel": "slack", "agent": "ops",
                "turns": [{"role": "user" if j == 0 else "assistant", "content": t,
                           "timestamp": ts + j * 60_000} for j, t in enumerate(turns)]}
        path = tmp_path / f"{sid}.json"
        path.write_text(json.dumps(data, ensure_ascii=False))
        files.append(str(path))
    root = tmp_path / "vault"
    init_vault(root)
    vault = Vault.open(root)
    ingest(vault, read_inputs(files))
    distill(vault, distiller="rules")
    introspect(vault, phases=("consolidate",))
    compile_vault(vault, CompileOptions(embedder=HASH))
    return vault


def top_sessions(vault: Vault, text: str, expand: bool, settings: RecallSettings | None = None
                 ) -> list[str]:
    result = recall(vault.state_dir, RecallQuery(text=text, top_k=5, expand=expand, depth=2),
                    embedder=HASH, settings=settings or RecallSettings(), telemetry=False)
    ranked: list[str] = []
    for n in result["nodes"]:
        for sid in [n["id"]] if n["kind"] == "session" else n.get("source_sessions") or []:
            if sid not in ranked:
                ranked.append(sid)
    return ranked[:3]


DISTRACTORS_EN = {
    "vpn-slow": ["The office VPN is slow in the afternoon.",
                 "The VPN gateway runs at full CPU when the backup sync starts."],
    "badge-reader": ["The badge reader at the side door cannot read new badges.",
                     "Facilities replaced the reader firmware and badges work again."],
    "mobile-release": ["The mobile app release is planned for Thursday.",
                       "We decided to ship the mobile app release behind a feature flag."],
    "login-page": ["Can we change the colour of the login page?",
                   "We decided to keep the login page blue to match the brand."],
    "wiki-search": ["The wiki search is slow for staff in the morning.",
                    "The wiki search index is rebuilt every night; we decided to move it to 3am."],
    "wiki-theme": ["Staff asked for a dark theme on the wiki.",
                   "We decided to enable the dark theme for all wiki pages."],
}


def test_why_question_ranks_the_cause_session_reached_by_expansion(tmp_path: Path) -> None:
    vault = build(tmp_path, {
        "sso-down": ["Staff cannot sign in to the wiki since this morning.",
                     "Sign-in fails because the identity provider rejects the SAML "
                     "assertion: the signing key on the identity provider is expired.",
                     "I uploaded a new signing key by hand and sign-in works again."],
        **DISTRACTORS_EN,
        "key-rotation": ["Did the key rotation job run last month?",
                         "The rotation job has been failing for six weeks since its vault "
                         "token was revoked; the expired signing key on the identity provider "
                         "is the result.",
                         "I issued a new vault token and the rotation job passes again."],
    })
    links = [p for p in (vault.root / "cards").rglob("*.md") if "introspect: across sessions"
             in p.read_text()]
    assert links, "introspect joins the symptom to the other session's cause"
    question = "why can staff not sign in to the wiki?"
    assert query_relation(question) == "CAUSED_BY"
    assert "key-rotation" not in top_sessions(vault, question, expand=False)
    assert "key-rotation" not in top_sessions(vault, question, expand=True,
                                              settings=RecallSettings(intent_weight=1.0))
    with_graph = top_sessions(vault, question, expand=True)
    assert with_graph[0] == "sso-down" and "key-rotation" in with_graph


def test_chinese_why_question_ranks_the_cause_session(tmp_path: Path) -> None:
    vault = build(tmp_path, {
        "支付超时": ["今天上午支付接口大量超时。",
                    "查下来是数据库连接池被占满了：连接池耗尽，请求都在排队。",
                    "我先把连接池调大到 200，支付恢复了。"],
        "会议室": ["三楼会议室的投影仪连不上。", "换了一根 HDMI 线之后投影仪好了。"],
        "发版计划": ["下周四的发版计划定了吗？", "我们决定下周四晚上发版，先灰度百分之十。"],
        "报表任务": ["报表导出任务昨晚又挂了吗？",
                    "报表导出任务每次失败都不归还数据库连接，导致了数据库连接池耗尽。",
                    "我把连接放进 with 语句里，失败时也会归还，连接数稳定了。"],
    })
    question = "为什么支付接口超时？"
    assert query_relation(question) == "CAUSED_BY"
    assert "报表任务" not in top_sessions(vault, question, expand=False)
    with_graph = top_sessions(vault, question, expand=True)
    assert with_graph[0] == "支付超时" and "报表任务" in with_graph


def test_relation_intent_of_a_question() -> None:
    assert query_relation("what caused the replication lag?") == "CAUSED_BY"
    assert query_relation("what exhausted the connection pool?") == "CAUSED_BY"
    assert query_relation("什么导致了连接池耗尽") == "CAUSED_BY"
    assert query_relation("what did the outage lead to?") == "CAUSES"
    assert query_relation("这次故障导致了什么") == "CAUSES"
    assert query_relation("what happened next?") == "TEMPORAL_NEXT"
    assert query_relation("之后呢") == "TEMPORAL_NEXT"
    for plain in ("what happened at the standup?", "how was the leak fixed?",
                  "when do disk alerts fire?", "what did Caroline research?"):
        assert query_relation(plain) is None


def test_a_step_goes_the_way_the_question_asks() -> None:
    assert goes_as_asked("CAUSED_BY", "out", "CAUSED_BY")  # to the cause
    assert goes_as_asked("CAUSES", "in", "CAUSED_BY")  # back along CAUSES: the cause too
    assert goes_as_asked("LED_TO", "in", "CAUSED_BY")
    assert not goes_as_asked("CAUSED_BY", "in", "CAUSED_BY")  # that is an effect
    assert goes_as_asked("CAUSED_BY", "in", "CAUSES")
    assert not goes_as_asked("SIMILAR_TO", "out", "CAUSED_BY")
    assert not goes_as_asked("TEMPORAL_NEXT", "out", "CAUSED_BY")
    assert goes_as_asked("TEMPORAL_NEXT", "out", "TEMPORAL_NEXT")
    assert not goes_as_asked("CAUSED_BY", "out", None)
