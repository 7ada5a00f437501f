"""Twin vaults (issue 25, "taint follows text" for statistics): two vaults identical in what
is shared, one also holding agent alice's private cards and session — full of the words of
bob's questions — and everything bob gets from recall, context and traverse (ids, order,
scores, counts, turns, the relations left to explore) is the same in both, through the CLI
and through a running `alaya serve`.

What this holds: BM25 statistics (document frequencies, lengths, the whole-note index of
sessions), the cut of each retriever's candidates, score scaling and the dense query's
common-word filter are computed over what the caller searches, never over the whole vault
(docs/security.md §1)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli.main import cli

from .conftest import module_machine

ROOT = Path(__file__).resolve().parent.parent
VOLATILE = ("latency_ms", "build", "compiled_at")  # a run's own, not the vault's

SHARED_CARDS = [
    ("card-0001", "fact", "Retry budget for the invoice exporter",
     "The invoice exporter retries a failed upload three times with a 30 second backoff.",
     [("DEPENDS_ON", "Payment webhook retry budget")]),
    ("card-0002", "fact", "Payment webhook retry budget",
     "Payment webhooks are retried five times; the retry budget resets every hour.",
     [("RELATES_TO", "Quarterly access review")]),
    ("card-0003", "decision", "Quarterly access review",
     "Access to the billing database is reviewed every quarter by the platform team.",
     [("RELATES_TO", "Marek Novak")]),
    ("card-0004", "pattern", "Backoff before retrying an export",
     "Wait with exponential backoff before retrying an export; never retry in a tight loop.",
     [("RELATES_TO", "Retry budget for the invoice exporter")]),
    ("card-0005", "fact", "Session cache TTL",
     "The session cache keeps entries for 60 seconds before they expire.", []),  # ← shared-1
    ("card-0006", "gotcha", "Exporter drops invoices on a full disk",
     "When the disk fills up the invoice exporter silently drops the batch it was writing.",
     [("CAUSED_BY", "Retry budget for the invoice exporter")]),
]
# alice's: the words of bob's questions, many times — on main they changed bob's BM25
# statistics (document frequencies, average length), his candidates and his scores
ALICE_CARDS = [
    (f"card-a{i:03d}", "fact", f"Invoice retry budget note {i}",
     "Invoice retry budget: the invoice exporter retry budget for invoice exports, retry "
     f"invoice webhook backoff budget {i}.",
     [("RELATES_TO", "Retry budget for the invoice exporter")] if i % 3 == 0 else [])
    for i in range(24)
]
LIMIT = 16  # [tiers] hot_limit and warm_limit in both twins
# a person's page of someone both sides know, linking the sessions he was in — alice's too
# (only a person writes such links): graph expansion leads on from a page that names at most
# four sessions; on main alice's two made it a hub of five for bob, who sees three
ENTITY = ("---\nid: ent-marek\ntitle: Marek Novak\ntype: person\nnamespace: shared\n"
          "created: 2026-03-01T09:00:00Z\n---\nMarek was in [[session-shared-1]], "
          "[[session-shared-2]], [[session-shared-3]], [[session-alice-1]] and "
          "[[session-alice-2]].\n")
QUESTIONS = ["invoice exporter retry budget", "how does the webhook retry backoff work",
             "billing database access review", "session cache ttl invoice",
             "what is the session cache ttl now"]


def card_text(cid: str, ctype: str, title: str, claim: str, rels: list[tuple[str, str]],
              namespace: str, source: str | None = None) -> str:
    relations = "".join(f'  - {{type: {t}, target: "[[{target}]]", weight: 0.8}}\n'
                        for t, target in rels)
    return (f"---\nid: {cid}\ntitle: {title}\ntype: {ctype}\nnamespace: {namespace}\n"
            "created: 2026-03-01T09:00:00Z\nupdated: 2026-03-01T09:00:00Z\n"
            + (f'source_sessions: ["[[{source}]]"]\n' if source else "")
            + f"claims:\n  - id: c1\n    text: {json.dumps(claim)}\n    confidence: 0.9\n"
            + (f"relations:\n{relations}" if rels else "") + f"---\n{claim}\n")


def session_json(sid: str, turns: list[str]) -> str:
    return json.dumps({"id": sid, "timestamp": 1772355600000, "channel": "ops",
                       "turns": [{"role": "user" if i % 2 == 0 else "assistant", "content": t}
                                 for i, t in enumerate(turns)]})


def alaya(v: Path, *args: str, agent: str | None = "bob", input: str | None = None) -> str:
    argv = ["--vault", str(v)] + (["--agent", agent] if agent else []) + list(args)
    res = CliRunner().invoke(cli, argv, input=input, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def make_vault(path: Path, with_alice: bool) -> Path:
    alaya(path, "init", str(path), agent=None)
    # tier limits the shared notes (12, with AGENTS.md, MEMORY.md, persona.md and the
    # templates) stay within and alice's 25 notes overflow — every note is new to the vault,
    # so HOT: on main her notes, newer still, took every HOT place and the shared ones went
    # WARM and then COLD, out of bob's vector search
    toml = path / "alaya.toml"
    text = toml.read_text("utf-8")
    for key, value in (("hot_limit", LIMIT), ("warm_limit", LIMIT)):
        text, n = re.subn(rf"(?m)^{key} = \d+", f"{key} = {value}", text)
        assert n == 1, key
    toml.write_text(text, "utf-8")
    for cid, ctype, title, claim, rels in SHARED_CARDS:
        folder = path / "cards" / ctype
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{title}.md").write_text(card_text(
            cid, ctype, title, claim, rels, "shared",
            "session-shared-1" if cid == "card-0005" else None), encoding="utf-8")
    for n, turns in ((1, ["The invoice exporter failed again last night.",
                          "Did it use its retry budget?",
                          "Yes, three retries with backoff, then it gave up.",
                          "Let us raise the webhook retry budget too.",
                          "The session cache ttl is 60 seconds for now."]),
                     (2, ["What is the session cache ttl these days?",
                          "The session cache ttl is still under review."]),
                     (3, ["Marek reviewed the billing database access list.",
                          "He signed it off for the quarter."])):
        shared = path.parent / f"{path.name}-shared-{n}.json"
        shared.write_text(session_json(f"session-shared-{n}", turns), encoding="utf-8")
        alaya(path, "ingest", str(shared), agent=None)
    (path / "entities").mkdir(exist_ok=True)
    (path / "entities" / "Marek Novak.md").write_text(ENTITY, encoding="utf-8")
    if with_alice:
        for cid, ctype, title, claim, rels in ALICE_CARDS:
            folder = path / "cards" / "@alice" / ctype
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{title}.md").write_text(
                card_text(cid, ctype, title, claim, rels, "alice"), encoding="utf-8")
        # her card from the later shared session that supersedes the shared card of the
        # earlier one: on main it demoted the earlier session in bob's "… now" questions
        (path / "cards" / "@alice" / "fact" / "Session cache TTL raised.md").write_text(
            card_text("card-a100", "fact", "Session cache TTL raised",
                      "The session cache ttl is 300 seconds now.",
                      [("SUPERSEDES", "Session cache TTL")], "alice", "session-shared-2"),
            encoding="utf-8")
        for n, turns in ((1, [
                "Invoice retry budget, invoice retry budget, invoice exporter retry budget.",
                "The webhook retry backoff budget for invoices is private.",
                "Session cache ttl for invoice exports is 300 seconds."]),
                         (2, ["Marek asked me about the billing database access review.",
                              "I told him the invoice exporter retry budget."])):
            private = path.parent / f"{path.name}-alice-{n}.json"
            private.write_text(session_json(f"session-alice-{n}", turns), encoding="utf-8")
            alaya(path, "ingest", str(private), agent="alice")
    alaya(path, "compile", agent=None)
    return path


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    mp = module_machine(tmp_path_factory)
    root = tmp_path_factory.mktemp("twins")
    v = make_vault(root / "with-alice", with_alice=True)
    v0 = make_vault(root / "without-alice", with_alice=False)
    # the planted notes are there, more than the tier limits hold, and found by their owner
    # (else the test holds for nothing)
    from vault_engine import artifacts as A

    notes = A.current_build(v / ".alaya").manifest()["notes"]  # type: ignore[union-attr]
    assert sum("/@alice/" in p for p in notes) > LIMIT >= sum(
        "/@alice/" not in p for p in notes)
    mine = json.loads(alaya(v, "recall", QUESTIONS[0], "--json", "--top-k", "20",
                            agent="alice"))
    assert any(n["namespace"] == "alice" for n in mine["nodes"])
    yield v, v0
    mp.undo()


def steady(doc: Any) -> Any:
    """A result without what differs from one run to the next (latency, build id, times)."""
    if isinstance(doc, dict):
        return {k: steady(x) for k, x in doc.items() if k not in VOLATILE}
    if isinstance(doc, list):
        return [steady(x) for x in doc]
    return doc


def difference(a: Any, b: Any, where: str = "") -> str:
    """Where two JSON documents first differ, and how."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return difference(a.get(k), b.get(k), f"{where}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return difference(x, y, f"{where}[{i}]")
    return f"{where or '.'}: with alice {json.dumps(a)[:300]}, without {json.dumps(b)[:300]}"


def bob_answers(v: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for q in QUESTIONS:
        for mode in ("hybrid", "bm25", "vector"):
            out[f"recall {mode} {q}"] = steady(json.loads(alaya(
                v, "recall", q, "--mode", mode, "--json", "--top-k", "10")))
        out[f"recall all-namespaces {q}"] = steady(json.loads(alaya(
            v, "recall", q, "--all-namespaces", "--json", "--top-k", "10")))
        out[f"context {q}"] = steady(json.loads(alaya(v, "context", "--query", q, "--json")))
    out["recall --from-nodes"] = steady(json.loads(alaya(
        v, "recall", "--from-nodes", "card-0001", "--depth", "2", "--json")))
    out["recall --concepts --rel"] = steady(json.loads(alaya(
        v, "recall", "--concepts", "invoice exporter", "--rel", "DEPENDS_ON", "--depth", "2",
        "--json")))
    out["recall --from-nodes through a page"] = steady(json.loads(alaya(
        v, "recall", "--from-nodes", "card-0003", "--depth", "2", "--json")))
    out["traverse path"] = steady(json.loads(alaya(
        v, "traverse", "card-0006", "card-0003", "--max-hops", "4", "--json")))
    out["traverse neighbourhood"] = steady(json.loads(alaya(
        v, "traverse", "card-0001", "--depth", "2", "--json")))
    return out


def test_bobs_recall_context_and_traverse_are_the_same_with_or_without_alice(
        twins: tuple[Path, Path]) -> None:
    v, v0 = twins
    got, without = bob_answers(v), bob_answers(v0)
    assert any(a["nodes"] for k, a in got.items() if k.startswith("recall "))
    differs = [k for k in got if got[k] != without[k]]
    assert not differs, "\n".join(f"{k} {difference(got[k], without[k])}" for k in differs)


def serve(v: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`alaya serve --no-watch` as its own process, and the URL its discovery file gives."""
    proc = subprocess.Popen([sys.executable, "-c", "from cli.main import main; main()",
                             "--vault", str(v), "serve", "--no-watch"], cwd=ROOT,
                            env=dict(os.environ), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    from compilers.serve import read_serve_file

    for _ in range(600):
        info = read_serve_file(v / ".alaya")
        if info:
            return proc, str(info["url"])
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "serve died")
        time.sleep(0.05)
    proc.terminate()
    raise AssertionError("serve did not start")


def post(url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(url + "/recall", data=json.dumps(body).encode(), method="POST",
                                 headers={"X-Alaya-Agent": "bob",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return steady(json.loads(resp.read().decode()))


def test_bobs_recall_through_serve_is_the_same_with_or_without_alice(
        twins: tuple[Path, Path]) -> None:
    answers = []
    for v in twins:
        proc, url = serve(v)
        try:
            got = {}
            for q in QUESTIONS:
                for mode in ("hybrid", "bm25"):
                    got[f"{mode} {q}"] = post(url, {"query": q, "mode": mode, "top_k": 10})
                got[f"all {q}"] = post(url, {"query": q, "all_namespaces": True})
            got["from_nodes"] = post(url, {"from_nodes": ["card-0001"], "depth": 2})
            answers.append(got)
        finally:
            proc.terminate()
            proc.wait(30)
    got, without = answers
    assert any(a["nodes"] for a in got.values())
    differs = [k for k in got if got[k] != without[k]]
    assert not differs, "\n".join(f"{k} {difference(got[k], without[k])}" for k in differs)
