"""Which turns a session hit shows (recall/anchors.py): the person the question names before
the other speakers, an answer before a turn that mostly asks — and the sessions' scores and
order stay as they were. Real vaults in tmp_path, a real compile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine.config import load_config
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall.anchors import mostly_asks
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery, RecallSettings
from vault_engine.sessions.ingest import ingest
from vault_engine.store.vault import Vault

HASH = HashEmbedder(256)
OFF = {"other_speaker_factor": 1.0, "asking_factor": 1.0}


@pytest.mark.parametrize("text,asks", [
    ("What do you like to do on weekends? Any activities with the kids?", True),
    ("Wow, congrats! What game were you playing?", True),
    ("Do you have a favorite movie? [shares a photo: a cinema at night]", True),
    ("你最近都参加了哪些活动？", True),
    ("I'm off to go swimming with the kids.", False),
    ("Hey Caroline! I went camping with my fam two weekends ago, it was great to unplug and "
     "hang with the kids. What about you?", False),
    ("我上周去游泳了，还参加了陶艺课。你呢？", False),
    ("", False),
])
def test_a_turn_that_mostly_asks(text: str, asks: bool) -> None:
    assert mostly_asks(text) is asks


def _sessions(root: Path, sessions: dict[str, list[tuple[str, str]]]) -> Vault:
    ms = 1_683_554_160_000  # 2023-05-08
    inputs = []
    for n, (sid, turns) in enumerate(sessions.items()):
        start = ms + n * 86_400_000
        session = {"id": sid, "timestamp": start, "channel": "chat",
                   "turns": [{"id": f"m{i}", "role": "user", "name": name, "content": text,
                              "timestamp": start + i * 1000}
                             for i, (name, text) in enumerate(turns)]}
        inputs.append((f"{sid}.json", json.dumps(session).encode()))
    ingest(Vault.open(root), inputs)
    vault = Vault.open(root)
    compile_vault(vault, CompileOptions(embedder=HASH))
    return vault


def _recall(vault: Vault, question: str, **settings: float) -> list[dict]:
    return recall(vault.state_dir, RecallQuery(text=question, mode="bm25", kinds=("session",)),
                  embedder=None, settings=RecallSettings(**settings), telemetry=False)["nodes"]


EN = {
    "chat-fun": [
        ("Caroline", "What activities do you partake in these days?"),
        ("Melanie", "Swimming with the kids is my favourite activity."),
        ("Caroline", "I went to a support group yesterday."),
    ],
    "chat-work": [
        ("Caroline", "Work was busy, the kids at the centre loved the painting activity."),
        ("Melanie", "That sounds lovely, Caroline."),
    ],
}
ZH = {
    "chat-fun": [
        ("李娜", "王强，你最近都参加了哪些活动？周末有活动吗？"),
        ("王强", "我上周末参加了游泳活动。"),
        ("李娜", "我昨天去了读书会。"),
    ],
    "chat-work": [
        ("李娜", "公司这周组织了团建活动，大家都参加了。"),
        ("王强", "听起来不错。"),
    ],
}


@pytest.mark.parametrize("sessions,question,answer", [
    (EN, "What activities does Melanie partake in?", "Swimming with the kids"),
    (ZH, "王强都参加了哪些活动？", "我上周末参加了游泳活动"),
])
def test_a_session_shows_the_named_persons_answer_first(
        vault_path: Path, sessions: dict, question: str, answer: str) -> None:
    vault = _sessions(vault_path, sessions)
    before, after = _recall(vault, question, **OFF), _recall(vault, question)
    # by words alone the other speaker's question wins …
    assert answer not in before[0]["turns"][0]["text"]
    # … the answer of the person named comes first, the question it answers beside it
    assert answer in after[0]["turns"][0]["text"]
    assert after[0]["turns"][0]["before"] == before[0]["turns"][0]["text"]
    # which turns are shown changed; which sessions, their order and scores did not
    assert [(n["id"], n["score"]) for n in after] == [(n["id"], n["score"]) for n in before]
    assert sorted(after[0]["anchors"]) == sorted(before[0]["anchors"])


def test_a_question_that_names_everyone_or_no_one_keeps_the_best_turns(
        vault_path: Path) -> None:
    vault = _sessions(vault_path, EN)
    for question in ("What activities do Melanie and Caroline partake in?",
                     "partake in activities with the kids centre"):
        plain = _recall(vault, question, **OFF)
        named_only = _recall(vault, question, asking_factor=1.0)
        assert [n["anchors"] for n in named_only] == [n["anchors"] for n in plain]


def test_the_factors_are_read_from_the_recall_config(vault_path: Path) -> None:
    toml = vault_path / "alaya.toml"
    text = toml.read_text("utf-8")
    assert "other_speaker_factor = 0.6" in text and "asking_factor = 0.6" in text  # the template
    toml.write_text(text.replace("other_speaker_factor = 0.6", "other_speaker_factor = 1.0")
                    .replace("asking_factor = 0.6", "asking_factor = 0.8"), "utf-8")
    settings = RecallSettings.from_config(load_config(vault_path))
    assert (settings.other_speaker_factor, settings.asking_factor) == (1.0, 0.8)
    assert (RecallSettings().other_speaker_factor, RecallSettings().asking_factor) == (0.6, 0.6)
