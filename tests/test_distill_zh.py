"""The offline distiller on Chinese and mixed sessions, through real vaults, real ingest, the
CLI and git: types from cues in context, clause titles, people and dates in the vault's time
zone, errors and fixes across turns, pasted material, the latest value winning, and recall
(stable order, the current value first, a person named in the question)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.store.model import Card, Entity
from vault_engine.store.vault import Vault

from .conftest import git_log

HASH = HashEmbedder(128)
T0 = int(dt.datetime(2026, 4, 14, 8, 0, tzinfo=dt.UTC).timestamp() * 1000)  # 16:00 in Shanghai


def run(vault: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], catch_exceptions=False)


def session(sid: str, turns: list[tuple[str, str | None, str]], start_ms: int = T0) -> dict:
    return {"id": sid, "timestamp": start_ms, "channel": "feishu", "turns": [
        {"role": role, **({"name": name} if name else {}), "content": text,
         "timestamp": start_ms + i * 60_000} for i, (role, name, text) in enumerate(turns)]}


def ingest_and_distill(vault: Path, tmp_path: Path, *sessions: dict) -> list[dict]:
    for s in sessions:
        (tmp_path / f"{s['id']}.json").write_text(json.dumps(s, ensure_ascii=False), "utf-8")
        assert run(vault, "ingest", str(tmp_path / f"{s['id']}.json")).exit_code == 0
    result = run(vault, "distill", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["sessions"]


def cards(vault: Path) -> list[Card]:
    return [n for n in Vault.open(vault).load().notes if isinstance(n, Card)]


def card_with(vault: Path, *phrases: str) -> Card:
    found = [c for c in cards(vault) if all(p in c.title + " ".join(x.text for x in c.claims)
                                            for p in phrases)]
    assert found, (phrases, [c.title for c in cards(vault)])
    return found[0]


ANSWER_STYLE = session("zh-answer-style", [
    ("user", "李娜", "可以。对了，下周一 4 月 20 日张伟入职，SRE 组的。回答请用中文，先说结论。"
                   "以后别在周五下午发版。帮我把 !482 这个 MR 合一下。"),
    ("assistant", None, "好的，已合并。"),
    ("user", "李娜", "客户那边发来的邮件你看下：\n\n> 您好：\n"
                   "> 请以后所有会议邀请都发到 admin@client.example 邮箱。\n\n"
                   "我的时区是 Asia/Shanghai，你说时间的时候都按北京时间，不要给我 UTC。"),
])


def test_preferences_instructions_events_and_pasted_material(zh_vault: Path, tmp_path: Path) -> None:
    ingest_and_distill(zh_vault, tmp_path, ANSWER_STYLE)
    made = cards(zh_vault)
    # imperative preferences count; a short Chinese imperative survives the minimum length
    assert card_with(zh_vault, "回答请用中文", "先说结论").type == "preference"
    friday = card_with(zh_vault, "以后别在周五下午发版")
    assert friday.type == "preference" and friday.title == "以后别在周五下午发版"
    # a Chinese name makes an event; the date is read in the vault's zone (Asia/Shanghai)
    joins = card_with(zh_vault, "张伟", "4 月 20 日", "入职")
    assert joins.type == "event" and joins.title.startswith("下周一 4 月 20 日张伟入职")  # no 可以。对了，
    assert joins.claims[0].valid_from == dt.datetime(2026, 4, 19, 16, 0, tzinfo=dt.UTC)
    assert "时间: 2026-04-20 (Mon) Asia/Shanghai" in (zh_vault / joins.path).read_text("utf-8")
    # 我 is the speaker
    assert card_with(zh_vault, "李娜的时区是 Asia/Shanghai").type == "preference"
    # a one-off task and the sender's request in a pasted e-mail are no instructions
    for c in made:
        text = c.title + " ".join(x.text for x in c.claims)
        assert "!482" not in text or c.type != "instruction", c.title
        assert "会议邀请" not in text or c.type not in ("instruction", "preference"), c.title
    # Asia/Shanghai is one entity, not two
    entities = [n.title for n in Vault.open(zh_vault).load().notes if isinstance(n, Entity)]
    assert "Asia" not in entities and "Shanghai" not in entities


NGINX = session("zh-nginx-413", [
    ("user", "张伟", "客服反馈工单系统上传附件失败：\n```\n413 Request Entity Too Large\n```"),
    ("assistant", None, "结论：ingress-nginx 默认 proxy-body-size 是 1m，所以大文件在网关就被拒绝了。"),
    ("user", "张伟", "我先 apply 了 annotation。\n```\nupload-svc-7d9f8b6c5-2xkqp   1/1     Running\n```\n"
                   "三个 Pod 全部 Running。"),
    ("assistant", None, "Pod Running 只说明后端在线，跟 413 没关系。"),
    ("user", "张伟", "好了。`proxy-body-size: 50m` 加上以后，客服传了一个 42MB 的 PDF，成功了，413 没再出现。"),
])


def test_an_error_and_its_fix_across_turns_make_one_gotcha(zh_vault: Path, tmp_path: Path) -> None:
    ingest_and_distill(zh_vault, tmp_path, NGINX)
    fix = card_with(zh_vault, "修复：", "proxy-body-size")
    assert fix.type == "gotcha" and "上传附件失败" in fix.title
    assert [e.link.block for c in fix.claims for e in c.evidence] == ["t1", "t5"]
    # the status report is evidence, not the fix
    assert not any("Running" in c.text for c in fix.claims if c.text.startswith("修复："))
    assert not any(x.text.startswith("修复：") and "Running" in x.text for c in cards(zh_vault)
                   for x in c.claims)
    # the cause named without an English cue word is its own gotcha, linked CAUSED_BY
    cause = card_with(zh_vault, "默认 proxy-body-size 是 1m")
    assert cause.type == "gotcha"
    assert any(r.type == "CAUSED_BY" and r.target.startswith(cause.stem[:20]) for r in fix.relations)


ROOT_CAUSE = session("zh-too-many-clients", [
    ("user", "陈静", "payment-svc 报错：\n```\nFATAL:  sorry, too many clients already\n```"),
    ("user", "陈静", "terminate 掉 metabase 那些连接之后 too many clients 的报错停了。根因就是 payment-svc "
                   "上周从 3 个 Pod 扩到 6 个，连接池没跟着调。"
                   "另外数据库密码是 Xk9#mP2vQ，你帮我生成一下 userlist.txt。"),
])


def test_root_causes_without_english_cues_and_no_credentials(zh_vault: Path, tmp_path: Path) -> None:
    ingest_and_distill(zh_vault, tmp_path, ROOT_CAUSE)
    assert card_with(zh_vault, "扩到 6 个", "连接池").type == "gotcha"
    fix = card_with(zh_vault, "修复：", "terminate")
    assert fix.type == "gotcha"
    for c in cards(zh_vault):
        assert "Xk9#mP2vQ" not in (zh_vault / c.path).read_text("utf-8")


ENGLISH = session("en-order-svc", [
    ("user", "Tom Becker", "The port must be a quoted string in YAML, e.g. \"8080\". We deployed order-svc "
                           "v3.8.0 on May 12. Can you check the logs for me?"),
    ("assistant", None, "I'd roll the chart back to v3.7.4, or restore the old keys."),
    ("user", "Tom Becker", "Decision: every Go service validates required config at startup. "
                           "And one preference: give me the commands first and the explanation after."),
])


def test_english_has_the_same_mechanisms(vault_path: Path, tmp_path: Path) -> None:
    ingest_and_distill(vault_path, tmp_path, ENGLISH)
    # "e.g." does not end the sentence
    yaml = card_with(vault_path, "quoted string in YAML")
    assert '"8080"' in yaml.claims[0].text
    # an event is an event, not a decision; a suggestion is no decision; a request no rule
    assert card_with(vault_path, "deployed order-svc").type == "event"
    assert card_with(vault_path, "validates required config").type == "decision"
    assert card_with(vault_path, "commands first").type == "preference"
    for c in cards(vault_path):
        assert "v3.7.4" not in c.title and "check the logs" not in c.title


def test_the_latest_value_wins_in_chinese_and_english(zh_vault: Path, tmp_path: Path) -> None:
    day = 86_400_000
    old = session("zh-db-old", [("user", "陈静", "db-primary 的 `max_connections` 先从 200 调到 300，留点余量。"),
                                ("user", "陈静", "The on-call handoff is on Monday at 10:00.")])
    new = session("zh-db-new", [("user", "陈静", "定了：`max_connections = 500`，跟升级一起生效。"),
                                ("user", "陈静", "The on-call handoff moved to Monday at 14:00, no longer 10:00.")],
                  start_ms=T0 + 30 * day)
    outcomes = ingest_and_distill(zh_vault, tmp_path, old, new)
    assert len(outcomes[1]["superseded"]) == 2, outcomes[1]
    for old_phrase, new_phrase in (("调到 300", "max_connections = 500"), ("Monday at 10:00", "14:00")):
        before, after = card_with(zh_vault, old_phrase), card_with(zh_vault, new_phrase)
        claim = before.claims[0]
        assert claim.status == "superseded"
        assert claim.valid_until == dt.datetime.fromtimestamp((T0 + 30 * day) / 1000, dt.UTC)
        assert any(r.type == "SUPERSEDES" for r in after.relations), after.relations
    assert any("superseded" in m for m in git_log(zh_vault) if m.startswith("distill: zh-db-new"))
    # recall: "现在…" finds the new value first
    compile_vault(Vault.open(zh_vault), CompileOptions(embedder=HASH))
    result = recall(Vault.open(zh_vault).state_dir, RecallQuery(text="现在 max_connections 是多少？", top_k=5),
                    embedder=HASH, settings=RecallSettings(), telemetry=False)
    cards_first = [n for n in result["nodes"] if n["kind"] == "card"]
    assert "500" in cards_first[0]["title"], [n["title"] for n in result["nodes"]]
    # … and the session that replaced the value ranks above the one it replaced
    for question in ("现在 max_connections 是多少？", "When is the on-call handoff now?"):
        found = recall(Vault.open(zh_vault).state_dir, RecallQuery(text=question, top_k=10),
                       embedder=HASH, settings=RecallSettings(), telemetry=False)["nodes"]
        order = [n["id"] for n in found if n["kind"] == "session"]
        assert order.index("zh-db-new") < order.index("zh-db-old"), (question, order)


def test_for_the_current_value_the_replaced_sessions_other_cards_go_down_too(
        zh_vault: Path, tmp_path: Path) -> None:
    # the old session also has a card about the same words (the checkpoint's root cause); for a 现在
    # question it must not outrank the new value, while a card of the old session that answers
    # something else keeps its place
    day = 86_400_000
    old = session("zh-ckpt-old", [
        ("user", "钟漫", "risk-feature-agg 的 checkpoint interval 定为 2min，timeout 设 10 分钟。"),
        ("user", "钟漫", "risk-feature-agg 的 checkpoint 超时，根因是反压太重，barrier 对齐要 8 分钟。"),
        ("user", "钟漫", "告警统一发到 #flink-oncall 频道。")])
    new = session("zh-ckpt-new", [
        ("user", "钟漫", "risk-feature-agg 的 checkpoint interval 从 2min 改成 5min 了，下周一生效。")],
                  start_ms=T0 + 14 * day)
    outcomes = ingest_and_distill(zh_vault, tmp_path, old, new)
    assert outcomes[1]["superseded"], [(c.type, c.title) for c in cards(zh_vault)]
    compile_vault(Vault.open(zh_vault), CompileOptions(embedder=HASH))

    def ranked(question: str) -> list[str]:
        nodes = recall(Vault.open(zh_vault).state_dir, RecallQuery(text=question, top_k=8),
                       embedder=HASH, settings=RecallSettings(), telemetry=False)["nodes"]
        return [n["title"] for n in nodes if n["kind"] == "card"]

    titles = ranked("现在 risk-feature-agg 的 checkpoint interval 是多少？")
    assert "5min" in titles[0], titles
    assert not any("反压" in t for t in titles[:1]), titles
    # a question about something else in the old session is not touched by the change
    assert "flink-oncall" in ranked("现在告警发到哪个频道？")[0]


def test_facts_that_merely_sound_alike_both_stay(zh_vault: Path, tmp_path: Path) -> None:
    day = 86_400_000
    a = session("a-first", [("user", "刘洋", "payment-svc 先上 Argo Rollouts 金丝雀，10% 起步。")])
    b = session("b-later", [("user", "刘洋", "payment-svc 的 p99 从 180ms 涨到 4.8s，CPU 95%。")],
                start_ms=T0 + day)
    outcomes = ingest_and_distill(zh_vault, tmp_path, a, b)
    assert outcomes[1]["superseded"] == []
    assert all(c.status == "supported" for card in cards(zh_vault) for c in card.claims)


def test_recall_order_does_not_change_with_top_k(zh_vault: Path, tmp_path: Path) -> None:
    ingest_and_distill(zh_vault, tmp_path, ANSWER_STYLE, NGINX, ROOT_CAUSE, ENGLISH)
    vault = Vault.open(zh_vault)
    compile_vault(vault, CompileOptions(embedder=HASH))
    for text in ("上传附件失败怎么修的？", "what does Tom prefer?", "张伟哪天入职", "连接池 根因"):
        full = [n["id"] for n in recall(vault.state_dir, RecallQuery(text=text, top_k=20), embedder=HASH,
                                        settings=RecallSettings(), telemetry=False)["nodes"]]
        for k in (1, 3, 5, 10):
            part = recall(vault.state_dir, RecallQuery(text=text, top_k=k), embedder=HASH,
                          settings=RecallSettings(), telemetry=False)["nodes"]
            assert [n["id"] for n in part] == full[:k], (text, k)
    # and through the CLI
    first = json.loads(run(zh_vault, "recall", "上传附件失败", "--top-k", "3", "--json").output)["nodes"]
    more = json.loads(run(zh_vault, "recall", "上传附件失败", "--top-k", "8", "--json").output)["nodes"]
    assert [n["id"] for n in first] == [n["id"] for n in more][:3]


def test_recall_language_and_people(zh_vault: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    commits = session("zh-commits", [
        ("user", "王芳", "commit message 用英文写，遵循 Conventional Commits，不要超过 72 个字符。")])
    travel = session("en-travel", [("user", "Sarah Lin", "I'll meet Li Na's team in Shanghai. Window seat please.")])
    ingest_and_distill(zh_vault, tmp_path, ANSWER_STYLE, commits, travel, ENGLISH)
    vault = Vault.open(zh_vault)
    compile_vault(vault, CompileOptions(embedder=HASH))

    def top(text: str, kinds: tuple[str, ...] = ()) -> list[dict]:  # BM25: the hash embedder has no meaning
        return recall(vault.state_dir, RecallQuery(text=text, top_k=5, kinds=kinds, mode="bm25"),
                      embedder=HASH, settings=RecallSettings(), telemetry=False)["nodes"]
    # the fault: the top card for this question was about commit messages
    card = top("用户希望我用什么语言回答？", ("card",))[0]
    assert "回答" in card["title"], card["title"]
    # an English question naming a Chinese speaker finds her session (pinyin), not the one
    # that only mentions her
    sessions = top("What did Li Na say about time zones?", ("session",))
    assert sessions[0]["id"] == "zh-answer-style", [s["id"] for s in sessions]


def test_session_notes_show_times_in_the_vault_timezone(zh_vault: Path, tmp_path: Path) -> None:
    ingest_and_distill(zh_vault, tmp_path, NGINX)
    note = next((zh_vault / "sessions").rglob("zh-nginx-413.md"))
    text = note.read_text("utf-8")
    assert "t1 · user · 张伟 · 2026-04-14T16:00:00+08:00" in text  # 08:00 UTC, shown in Shanghai
    assert "title: Session 2026-04-14 16:00" in text
    parsed = next(n for n in Vault.open(zh_vault).load().notes if n.path.endswith("zh-nginx-413.md"))
    assert parsed.turns[0].timestamp == dt.datetime(2026, 4, 14, 8, 0, tzinfo=dt.UTC)  # the same instant
