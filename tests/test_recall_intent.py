"""Recall reads what a question wants — a list, a time — in English and Chinese, and ranks for
it: time questions put the turn that says when first."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine import artifacts as A
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.intent import query_intent
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.sessions.ingest import ingest
from vault_engine.store.vault import Vault
from vault_engine.text.timed import says_when

HASH = HashEmbedder(256)


@pytest.mark.parametrize("question", [
    "What activities does Melanie partake in?",
    "Which cities has Jon visited?",
    "What LGBTQ+ events has Caroline participated in?",
    "What are some changes Caroline has faced?",
    "In what ways is Caroline participating in the community?",
    "How many times has Melanie gone to the beach?",
    "List the services we migrated",
    "张伟都负责或接手了哪些系统？",
    "我们踩过哪些“配置改了但没有真正生效”的坑？",
    "上个月的故障都有什么？",
    "吴婷团队的打包和 CI 分别跑在哪些平台上？",
    "这个 bug 出现过几次？",
])
def test_list_questions_are_recognised(question: str) -> None:
    assert query_intent(question).listing


@pytest.mark.parametrize("question", [
    "What is Caroline's identity?",
    "Why did the deploy fail?",
    "What does Melanie do to destress?",
    "What was the status of the migration?",
    "Where did Caroline move from?",
    "为什么结账页面的价格是旧的？",
    "李娜的女儿几岁？",
    "Redis 的 maxmemory 现在是多少？",
])
def test_single_answer_questions_are_not_lists(question: str) -> None:
    assert not query_intent(question).listing


@pytest.mark.parametrize("question,when", [
    ("When did Caroline go to the LGBTQ support group?", True),
    ("when is the freeze?", True),
    ("How long ago did Nate adopt the turtles?", True),
    ("What year did Melanie start painting?", True),
    ("Which month was the outage?", True),
    ("新来的 SRE 张伟是哪天开始上班的？", True),
    ("欧阳倩的母亲什么时候过生日？", True),
    ("多久以前换的证书？", True),
    ("Why did the deploy fail?", False),
    ("What does Melanie paint?", False),
    ("为什么数据库连接数满了？", False),
    ("", False),
])
def test_time_questions_are_recognised(question: str, when: bool) -> None:
    assert query_intent(question).when is when


@pytest.mark.parametrize("text,timed", [
    ("I went to a LGBTQ support group yesterday and it was so powerful.", True),
    ("I ran a charity race for mental health last Saturday.", True),
    ("I went to an LGBTQ conference two days ago.", True),
    ("Seven years now, and I've finally found my real muses.", True),
    ("We moved here in 2019.", True),
    ("The renewal is due on 12 May.", True),
    ("We always look forward to our family camping trip.", False),
    ("The gateway drops the notice unless plugins.allow lists telegram.", False),
    ("张伟下周一开始上班。", True),
    ("证书是三天前过期的。", True),
    ("4 月 20 日晚上 10 点开始冻结。", True),
    ("我们打算周末去露营。", True),
    ("Redis 的 maxmemory 改成 4gb 了。", False),
    ("这个配置改了但没有真正生效。", False),
])
def test_a_turn_that_says_when(text: str, timed: bool) -> None:
    assert says_when(text) is timed


def _session_vault(root: Path, sid: str, turns: list[tuple[str, str]]) -> Vault:
    ms = 1_683_554_160_000  # 2023-05-08
    session = {"id": sid, "timestamp": ms, "channel": "chat",
               "turns": [{"id": f"m{i}", "role": "user", "name": name, "content": text,
                          "timestamp": ms + i * 1000} for i, (name, text) in enumerate(turns)]}
    ingest(Vault.open(root), [(f"{sid}.json", json.dumps(session).encode())])
    vault = Vault.open(root)
    compile_vault(vault, CompileOptions(embedder=HASH))
    return vault


@pytest.mark.parametrize("turns,question,dated", [
    ([("Caroline", "The support group talk about trans stories was inspiring, the group "
                   "support matters."),
      ("Melanie", "That sounds lovely."),
      ("Caroline", "Yesterday after work I finally went along with my neighbour Anna to "
                   "the support group downtown."),
      ("Melanie", "My kids love the museum, Caroline, and the group of dinosaurs.")],
     "When did Caroline go to the support group?", "t3"),
    ([("李娜", "张伟开始上班打卡，张伟上班准时。"),
      ("王强", "好的。"),
      ("李娜", "下周一早上九点张伟到新办公室开始上班，记得帮他开通账号和门禁。"),
      ("王强", "食堂的饭菜不错，大家都说上班之前要吃早饭。")],
     "张伟什么时候开始上班？", "t3"),
])
def test_a_time_question_ranks_the_turn_that_says_when(
        vault_path: Path, turns: list[tuple[str, str]], question: str, dated: str) -> None:
    vault = _session_vault(vault_path, "chat-when", turns)
    build = A.current_build(vault.state_dir)
    assert build is not None
    timed = np.load(build.path(A.RECALL) / "unit_timed.npy")
    assert timed.tolist() == [0, 0, 1, 0]  # compiled per turn

    def anchors(weight: float) -> list[str]:
        result = recall(vault.state_dir, RecallQuery(text=question, mode="bm25"), embedder=None,
                        settings=RecallSettings(time_weight=weight), telemetry=False)
        return result["nodes"][0]["anchors"]

    assert anchors(0.0)[0] != dated  # by words alone the other turn wins …
    assert anchors(0.3)[0] == dated  # … a time question puts the dated turn first


def test_the_time_boost_leaves_other_questions_alone(vault_path: Path) -> None:
    vault = _session_vault(vault_path, "chat-other", [
        ("Caroline", "The support group talk was inspiring, the group support matters."),
        ("Caroline", "I went to the support group yesterday.")])

    def anchors(weight: float) -> list[str]:
        return recall(vault.state_dir, RecallQuery(text="Caroline support group"),
                      embedder=HASH, settings=RecallSettings(time_weight=weight),
                      telemetry=False)["nodes"][0]["anchors"]

    assert anchors(0.0) == anchors(0.5)


def _fact_card(root: Path, name: str, text: str, session: str) -> None:
    path = root / "cards" / "fact" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nid: card-{name.lower()}\ntitle: {name}\ntype: fact\n"
        f"source_sessions: [\"[[{session}]]\"]\nclaims:\n  - id: c1\n    text: {text}\n"
        f"    evidence:\n      - {{kind: session, source: \"[[{session}#^t1]]\"}}\n---\n",
        encoding="utf-8")


@pytest.mark.parametrize("question", ["What tools has Alice used for the network?",
                                      "Alice 在网络上都用过哪些工具？"])
def test_a_list_question_gives_each_session_a_slot(vault_path: Path, question: str) -> None:
    """Three memories from one session and one from another: a list question shows the other
    session second, before the first session's repeats; without diversity it comes later."""
    for sid, text in (("chat-a", "Alice used Terraform for the network, Terraform tools."),
                      ("chat-b", "Alice tried Ansible once.")):
        ms = 1_683_554_160_000 if sid == "chat-a" else 1_683_654_160_000
        ingest(Vault.open(vault_path), [(f"{sid}.json", json.dumps(
            {"id": sid, "timestamp": ms, "channel": "chat", "turns": [
                {"id": "m1", "role": "user", "name": "Alice", "content": text,
                 "timestamp": ms}]}).encode())])
    _fact_card(vault_path, "Terraform network", "Alice used Terraform tools for the network "
               "网络 工具", "chat-a")
    _fact_card(vault_path, "Terraform tools", "Alice used the Terraform tools on the network "
               "网络 工具", "chat-a")
    vault = Vault.open(vault_path)
    compile_vault(vault, CompileOptions(embedder=HASH))
    assert query_intent(question).listing

    def order(diversify: bool) -> list[frozenset[str]]:
        nodes = recall(vault.state_dir, RecallQuery(text=question, top_k=4, mode="bm25",
                                                    expand=False),
                       embedder=None,  # MMR off: the effect of session diversity alone
                       settings=RecallSettings(diversify=diversify, mmr_lambda=1.0),
                       telemetry=False)["nodes"]
        return [frozenset([n["id"]] if n["kind"] == "session" else n["source_sessions"])
                for n in nodes]

    plain, diverse = order(False), order(True)
    assert sorted(plain, key=sorted) == sorted(diverse, key=sorted)  # the same four memories
    assert plain.index(frozenset({"chat-b"})) > 1  # by score the other session comes late …
    assert diverse[:2] == [{"chat-a"}, {"chat-b"}]  # … a list gives it the second slot


def test_a_single_answer_question_keeps_its_order(vault_path: Path) -> None:
    _fact_card(vault_path, "Terraform network", "Alice used Terraform for the network",
               "chat-a")
    _fact_card(vault_path, "Terraform state", "Alice keeps the Terraform state in S3", "chat-a")
    _fact_card(vault_path, "Ansible", "Alice tried Ansible once for Terraform", "chat-b")
    vault = Vault.open(vault_path)
    compile_vault(vault, CompileOptions(embedder=HASH))

    def order(diversify: bool) -> list[str]:
        return [n["id"] for n in recall(
            vault.state_dir, RecallQuery(text="Where does Alice keep the Terraform state?",
                                         mode="bm25", expand=False), embedder=None,
            settings=RecallSettings(diversify=diversify), telemetry=False)["nodes"]]

    assert order(True) == order(False)


def test_a_day_a_turn_names_is_resolved_and_matched(vault_path: Path) -> None:
    """"Last Saturday", said on Wednesday 10 May 2023, is 6 May: a question about 6 May finds
    that session through the day its turn names, not only through the session's own date."""
    for sid, ms, text in (
            ("chat-sat", 1_683_712_800_000, "I ran the charity race last Saturday."),  # 10 May
            ("chat-tue", 1_683_626_400_000, "I ran the charity race, it was great.")):  # 9 May
        ingest(Vault.open(vault_path), [(f"{sid}.json", json.dumps(
            {"id": sid, "timestamp": ms, "channel": "chat", "turns": [
                {"id": "m1", "role": "user", "name": "Mel", "content": text,
                 "timestamp": ms}]}).encode())])
    vault = Vault.open(vault_path)
    compile_vault(vault, CompileOptions(embedder=HASH))
    build = A.current_build(vault.state_dir)
    assert build is not None
    rows = {r["note"]: r for r in map(json.loads, build.path(A.UNITS).read_text().splitlines())}
    assert rows["chat-sat"]["dates"] == ["2023-05-06"] and "dates" not in rows["chat-tue"]

    def scores(weight: float) -> dict[str, float]:
        nodes = recall(vault.state_dir, RecallQuery(text="charity race on 6 May 2023",
                                                    mode="bm25", expand=False),
                       embedder=None, settings=RecallSettings(date_weight=weight),
                       telemetry=False)["nodes"]
        return {n["id"]: n["score"] for n in nodes}

    off, on = scores(0.0), scores(0.3)
    # the day its turn names matches exactly; the other session only by month
    assert on["chat-sat"] - off["chat-sat"] == pytest.approx(0.3, abs=1e-3)
    assert on["chat-tue"] - off["chat-tue"] == pytest.approx(0.15, abs=1e-3)


def test_relative_dates_are_made_absolute_at_ingest_in_the_vault_zone(vault_path: Path) -> None:
    """Ingest writes the day a relative date meant into the turn's header, resolved in
    `[vault] timezone`: 00:30 on 9 May in Shanghai is 16:30 UTC on 8 May, so 昨天 is 8 May
    (in UTC it would read as 7 May). Recall's date match reads the header; a turn appended
    later gets its own; a note written before headers carried dates is resolved at compile."""
    toml = vault_path / "alaya.toml"
    toml.write_text(toml.read_text("utf-8").replace('timezone = ""', 'timezone = "Asia/Shanghai"'),
                    encoding="utf-8")
    ms = 1_683_563_400_000  # 2023-05-08T16:30:00Z = 2023-05-09 00:30 in Shanghai (a Tuesday)
    turns = [{"id": "m1", "role": "user", "name": "李娜", "content": "昨天我们去爬山了，上周六去了露营。",
              "timestamp": ms},
             {"id": "m2", "role": "user", "name": "Mel", "content": "We went camping two "
              "weekends ago, and every Monday I swim.", "timestamp": ms + 1000},
             {"id": "m3", "role": "user", "name": "Mel", "content": "Nothing dated here.",
              "timestamp": ms + 2000}]
    session = {"id": "chat-dates", "timestamp": ms, "channel": "chat", "turns": turns}
    ingest(Vault.open(vault_path), [("s.json", json.dumps(session).encode())])
    note = next(p for p in (vault_path / "sessions").rglob("chat-dates.md"))
    text = note.read_text("utf-8")
    assert "· id m1 · dates: 昨天 = 2023-05-08; 上周六 = 2023-05-06\n" in text
    assert "· id m2 · dates: two weekends ago = week of 2023-04-24\n" in text  # not "every Monday"
    assert "· id m3\n" in text  # nothing to resolve: no dates part
    parsed = [n for n in Vault.open(vault_path).load().notes if n.id == "chat-dates"][0]
    assert parsed.turns[0].dates == (("昨天", "2023-05-08"), ("上周六", "2023-05-06"))
    assert parsed.turns[0].source_id == "m1" and parsed.turns[2].dates == ()

    # a turn appended later gets its own dates; the turns already there are not rewritten
    session["turns"] = [*turns, {"id": "m4", "role": "user", "name": "Mel",
                                 "content": "I ran the race yesterday.", "timestamp": ms + 3000}]
    ingest(Vault.open(vault_path), [("s.json", json.dumps(session).encode())])
    grown = note.read_text("utf-8")
    assert text.split("\n---\n", 1)[1] in grown  # every turn already there, byte for byte
    assert "· id m4 · dates: yesterday = 2023-05-08\n" in grown

    # a session note from before dates were written: the day is worked out when compiling
    old = vault_path / "sessions" / "2023-05" / "chat-old.md"
    old.write_text("---\nid: chat-old\ntitle: Old\nstarted: 2023-05-10T08:00:00Z\n---\n"
                   "> [!user] t1 · user · Mel · 2023-05-10T08:00:00Z · id m1\n"
                   "> I ran the charity race last Saturday.\n\n^t1\n", encoding="utf-8")
    vault = Vault.open(vault_path)
    compile_vault(vault, CompileOptions(embedder=HASH))
    build = A.current_build(vault.state_dir)
    assert build is not None
    rows = [json.loads(x) for x in build.path(A.UNITS).read_text().splitlines()]
    dates = {(r["note"], r.get("anchor")): r.get("dates") for r in rows}
    assert dates[("chat-dates", "t1")] == ["2023-05-08", "2023-05-06"]  # Shanghai's 昨天
    assert dates[("chat-dates", "t4")] == ["2023-05-08"]
    assert dates[("chat-old", "t1")] == ["2023-05-06"]
