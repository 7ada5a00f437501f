"""How good are the offline distiller's cards? Coverage of annotated facts, the right type,
junk titles, leaks, and recall of the evidence sessions — on the Chinese and mixed set
(benchmarks/zh), the English agentops sets and LoCoMo dev.

Each set's sessions are ingested into a fresh vault, distilled with the offline rules and
compiled with the bundled embedder, exactly as a user's first run would.

- **coverage**: a fact counts when one card from its session has all the fact's key phrases
  in its title + claims (NFKC + casefold, runs of white space as one space);
- **right type**: of the covered facts, those with a covering card of the annotated type (a
  `fix` is a gotcha card holding the fix as a claim that begins "Fix:" or "修复：");
- **junk titles**: titles that begin with a filler ("可以。", "对了，", "OK,", "So …") or are
  cut inside a word or identifier (the title ends where the source text goes on inside a
  Latin word or a jieba word, or with an unclosed bracket or quote);
- **leaks**: planted secrets found in any card, entity, scene, persona.md or MEMORY.md, and
  injection text found there, or in the `context` an agent loads for each question;
- **negatives**: cards of a type the annotation rules out for a phrase (a quoted email as an
  instruction, a status report as the fix, a one-off task as a standing instruction);
- **recall**: R@5 and MRR of the questions' evidence sessions (a card counts for the sessions
  its claims cite), and for `current` questions whether the current session ranks above the
  superseded one.

LoCoMo has no key phrases: its coverage is the share of LoCoMo's own observations (one per
evidence turn) whose turn some card cites; its recall is the session-level recall of
benchmarks/locomo.py (sessions only).

    .venv/bin/python benchmarks/distill_quality.py                  # zh dev + agentops sets
    .venv/bin/python benchmarks/distill_quality.py --sets zh-heldout zh-heldout2
    .venv/bin/python benchmarks/distill_quality.py --sets zh-heldout3   # blind: once, at the end
    .venv/bin/python benchmarks/distill_quality.py --sets locomo    # minutes
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import report  # noqa: E402
from compilers.options import CompileOptions  # noqa: E402
from compilers.pipeline import compile_vault  # noqa: E402
from vault_engine.providers.embedding import LocalEmbedder  # noqa: E402
from vault_engine.recall.context import build_context  # noqa: E402
from vault_engine.recall.pipeline import recall  # noqa: E402
from vault_engine.recall.query import RecallQuery, RecallSettings  # noqa: E402
from vault_engine.sessions.distill import distill  # noqa: E402
from vault_engine.sessions.ingest import ingest  # noqa: E402
from vault_engine.store.init_vault import init_vault  # noqa: E402
from vault_engine.store.model import Card  # noqa: E402
from vault_engine.store.vault import Vault  # noqa: E402

SETS = {
    "zh-dev": ROOT / "benchmarks" / "zh" / "dev",
    "zh-heldout": ROOT / "benchmarks" / "zh" / "heldout",
    "zh-heldout2": ROOT / "benchmarks" / "zh" / "heldout2",  # a second check set, written apart
    "zh-heldout3": ROOT / "benchmarks" / "zh" / "heldout3",  # a third, written blind; run once
    "agentops": ROOT / "benchmarks" / "agentops",
    "agentops-heldout": ROOT / "benchmarks" / "agentops" / "heldout",
    "locomo": ROOT.parent / "shared" / "data" / "locomo-dev",
}
FIX_PREFIXES = ("fix:", "修复：", "修复:")
FILLER_RE = re.compile(
    r"(?i)^(?:可以|好的?|嗯+|对了|另外|还有|那么?|然后|所以|其实|行|收到|明白|记下了|是的|对|哦|啊"
    r"|ok(?:ay)?|so|well|also|and|but|yes|yeah|right|hmm|btw|actually|anyway|by\s+the\s+way"
    r"|oh|sure|great|thanks)(?:[，,。.!！:：~～\s]|$)")
LATIN = re.compile(r"[A-Za-z0-9_]")


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold())


@dataclass
class CardView:
    title: str
    type: str
    path: str
    claims: list[dict[str, Any]]
    sessions: set[str]
    turns: set[tuple[str, str]]  # (session, anchor) its claims cite
    relations: list[tuple[str, str]]
    text: str = ""  # title + claims, normalised

    @property
    def has_fix(self) -> bool:
        return any(c["text"].strip().casefold().startswith(FIX_PREFIXES) for c in self.claims)


@dataclass
class Result:
    name: str
    numbers: dict[str, Any] = field(default_factory=dict)


def card_views(vault: Vault) -> list[CardView]:
    out = []
    for note in vault.load().notes:
        if not isinstance(note, Card):
            continue
        claims, sessions, turns = [], set(), set()
        for c in note.claims:
            claims.append({"text": c.text, "status": c.status,
                           "valid_until": c.valid_until.isoformat() if c.valid_until else None})
            for ev in c.evidence:
                if ev.link is not None:
                    sessions.add(ev.link.target)
                    if ev.link.block:
                        turns.add((ev.link.target, ev.link.block))
        sessions |= {str(s).strip("[]").split("|")[0] for s in note.source_sessions}
        rels = [(r.type, r.link.target) for r in note.relations]
        view = CardView(note.title, note.type, note.path, claims, sessions, turns, rels)
        view.text = norm(note.title + "\n" + "\n".join(c["text"] for c in claims))
        out.append(view)
    return out


def build(workdir: Path, inputs: list[tuple[str, bytes]], embedder: Any,
          compile_it: bool = True, timezone: str = "") -> Vault:
    """A fresh vault with these sessions, distilled; the embedding cache of an earlier run in
    the same folder is kept, so only new texts are embedded."""
    cache = workdir / ".alaya" / "cache" / "embeddings.sqlite"
    kept = workdir.with_name(workdir.name + ".cache.sqlite")
    if cache.exists():
        shutil.copy2(cache, kept)
    shutil.rmtree(workdir, ignore_errors=True)
    init_vault(workdir)
    if timezone:  # the sessions' wall-clock times are in this zone (benchmarks/zh/README.md)
        toml = workdir / "alaya.toml"
        toml.write_text(toml.read_text("utf-8").replace('timezone = ""', f'timezone = "{timezone}"'),
                        "utf-8")
    if kept.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(kept), cache)
    vault = Vault.open(workdir)
    ingest(vault, inputs)
    distill(vault, distiller="rules")
    if compile_it:
        compile_vault(vault, CompileOptions(embedder=embedder))
    return vault


def coverage(facts: list[dict], cards: list[CardView]) -> dict[str, Any]:
    by_type: dict[str, list[tuple[bool, bool]]] = {}
    missed, wrong = [], []
    speaker_named = []
    for f in facts:
        phrases = [norm(p) for p in f["key_phrases"]]
        covering = [c for c in cards if f["session"] in c.sessions
                    and all(p in c.text for p in phrases)]
        want = "gotcha" if f["type"] == "fix" else f["type"]
        right = any(c.type == want and (f["type"] != "fix" or c.has_fix) for c in covering)
        by_type.setdefault(f["type"], []).append((bool(covering), right))
        if not covering:
            missed.append(f["id"])
        elif not right:
            wrong.append(f"{f['id']}: {sorted({c.type for c in covering})}")
        if f.get("speaker") and covering:
            speaker_named.append(any(norm(f["speaker"]) in c.text for c in covering))
    flat = [x for rows in by_type.values() for x in rows]
    covered = [r for c, r in flat if c]
    return {
        "facts": len(flat), "coverage": round(sum(c for c, _ in flat) / len(flat), 3),
        "right_type_of_covered": round(sum(covered) / len(covered), 3) if covered else 0.0,
        "by_type": {t: {"n": len(rows), "coverage": round(sum(c for c, _ in rows) / len(rows), 3),
                        "right_type": round(sum(r for _, r in rows) / len(rows), 3)}
                    for t, rows in sorted(by_type.items())},
        "speaker_named": f"{sum(speaker_named)}/{len(speaker_named)}" if speaker_named else None,
        "missed": missed, "wrong_type": wrong,
    }


def _cut_inside_word(title: str, source: str) -> bool:
    """The title ends where its source text continues inside a word or identifier."""
    from vault_engine.text.words import word_spans

    t = norm(title.replace("`", "")).rstrip("…. ")
    s = norm(source.replace("`", ""))
    if not t:
        return True
    if t.count("(") > t.count(")") or t.count("（") > t.count("）") or t.count('"') % 2 or \
            t.count("“") > t.count("”") or t.count("「") > t.count("」"):
        return True
    pos = s.find(t)
    if pos < 0:
        return False
    end = pos + len(t)
    if end >= len(s):
        return False
    if LATIN.match(t[-1]) and (LATIN.match(s[end]) or (s[end] in ".-/" and end + 1 < len(s)
                                                        and LATIN.match(s[end + 1]))):
        return True
    # inside a Chinese word: no word of the source's segmentation ends at the cut
    if "\u4e00" <= t[-1] <= "\u9fff" and "\u4e00" <= s[end] <= "\u9fff":
        ends = {e for _, e in word_spans(s)}
        return end not in ends
    return False


def junk_titles(cards: list[CardView], turn_text: dict[tuple[str, str], str]) -> dict[str, Any]:
    junk = []
    for c in cards:
        if FILLER_RE.match(c.title.strip()):
            junk.append(f"filler: {c.title}")
            continue
        sources = [cl["text"] for cl in c.claims] + [turn_text.get(t, "") for t in c.turns]
        if any(norm(c.title.replace("`", "")).rstrip("…. ") in norm(s.replace("`", ""))
               for s in sources if s):
            cut = any(_cut_inside_word(c.title, s) for s in sources if s
                      and norm(c.title.replace("`", "")).rstrip("…. ")
                      in norm(s.replace("`", "")))
        else:
            cut = _cut_inside_word(c.title, "")
        if cut:
            junk.append(f"cut: {c.title}")
    return {"cards": len(cards), "junk_titles": round(len(junk) / len(cards), 3) if cards else 0,
            "junk": junk}


def _pieces(text: str) -> list[str]:
    """An injection phrase and its clauses of 6+ characters: any of them in a card is a leak."""
    parts = [text] + re.split(r"[，。,.;；:：！!？?]\s*", text)
    return [norm(p) for p in parts if len(p.strip()) >= 6]


def _secret_pieces(value: str) -> list[str]:
    lines = [x.strip() for x in value.splitlines() if len(x.strip()) >= 16
             and not x.startswith("-----")]
    return [value] if len(lines) <= 1 else lines


def memory_texts(vault: Vault) -> dict[str, str]:
    out = {}
    for folder in ("cards", "entities", "scenes"):
        for p in sorted((vault.root / folder).rglob("*.md")):
            out[str(p.relative_to(vault.root))] = p.read_text("utf-8")
    for name in ("persona.md", "MEMORY.md"):
        if (vault.root / name).exists():
            out[name] = (vault.root / name).read_text("utf-8")
    return out


def leaks(vault: Vault, secrets: list[dict], injections: list[dict],
          contexts: dict[str, str]) -> dict[str, Any]:
    texts = memory_texts(vault)
    found: dict[str, list[str]] = {"secrets_in_memory": [], "secrets_in_context": [],
                                   "injections_in_memory": [], "injections_in_context": []}
    for s in secrets:
        pieces = _secret_pieces(s["value"])
        for path, text in texts.items():
            if any(p in text for p in pieces):
                found["secrets_in_memory"].append(f"{s['kind']} ({s['session']}) in {path}")
        for q, text in contexts.items():
            if any(p in text for p in pieces):
                found["secrets_in_context"].append(f"{s['kind']} ({s['session']}) for {q!r}")
                break
    for inj in injections:
        pieces = _pieces(inj["phrase"])
        for path, text in texts.items():
            if any(p in norm(text) for p in pieces):
                found["injections_in_memory"].append(f"{inj['session']} t{inj['turn']} in {path}")
        for q, text in contexts.items():
            if any(p in norm(text) for p in pieces):
                found["injections_in_context"].append(f"{inj['session']} t{inj['turn']} for {q!r}")
                break
    counts = {k: len(v) for k, v in found.items()}
    return {"leaks": sum(counts.values()), **counts, "found": [x for v in found.values() for x in v]}


def negative_hits(negatives: list[dict], cards: list[CardView]) -> dict[str, Any]:
    hits = []
    for n in negatives:
        want = "gotcha" if n["must_not_type"] == "fix" else n["must_not_type"]
        phrase = norm(n["phrase"])
        for c in cards:
            # the annotation names the turn whose text must not become that type: a card of
            # the right type from another turn (the user rejecting the wording) is no hit
            if n["session"] not in c.sessions or c.type != want or \
                    (n["session"], f"t{n['turn']}") not in c.turns:
                continue
            text = c.text if n["must_not_type"] != "fix" else norm(
                "\n".join(cl["text"] for cl in c.claims if cl["text"].casefold().startswith(
                    FIX_PREFIXES)))
            if phrase in text:
                hits.append(f"{n['session']} t{n['turn']} [{c.type}] {c.title}")
    return {"negatives": len(negatives), "violations": len(hits), "violating": hits}


def sessions_of(nodes: list[dict]) -> list[str]:
    ranked: list[str] = []
    for n in nodes:
        for sid in ([n["id"]] if n["kind"] == "session" else n.get("source_sessions") or []):
            if sid not in ranked:
                ranked.append(sid)
    return ranked


def recall_metrics(vault: Vault, questions: list[dict], embedder: Any,
                   mode: str = "hybrid") -> tuple[dict, dict]:
    settings = RecallSettings.from_config(vault.config)
    rows, contexts = [], {}
    for q in questions:
        gold = {e["session"] for e in q.get("evidence", [])} or set(q["expected_sessions"])
        result = recall(vault.state_dir, RecallQuery(text=q["query"], top_k=10, mode=mode),
                        embedder=embedder, settings=settings, telemetry=False)
        ranked = sessions_of(result["nodes"])
        first = next((i for i, s in enumerate(ranked, 1) if s in gold), None)
        row = {"type": q["type"], "tags": q.get("tags", []), "query": q["query"],
               "r5": len(gold & set(ranked[:5])) / len(gold), "mrr": 1 / first if first else 0.0}
        if q.get("superseded_sessions"):
            new = min((ranked.index(s) for s in q["expected_sessions"] if s in ranked),
                      default=99)
            old = min((ranked.index(s) for s in q["superseded_sessions"] if s in ranked),
                      default=99)
            row["current_first"] = new < old
        rows.append(row)
        contexts[q["query"]] = build_context(vault, query=q["query"], embedder=embedder).text
    def mean(key: str, sel: list[dict]) -> float:
        return round(statistics.mean(r[key] for r in sel), 3) if sel else 0.0
    current = [r for r in rows if "current_first" in r]
    out = {"questions": len(rows), "r5": mean("r5", rows), "mrr": mean("mrr", rows),
           "by_type": {t: {"n": len(sel), "r5": mean("r5", sel), "mrr": mean("mrr", sel)}
                       for t in sorted({r["type"] for r in rows})
                       for sel in [[r for r in rows if r["type"] == t]]},
           "cross_lingual": {"n": len([r for r in rows if "cross-lingual" in r["tags"]]),
                             "r5": mean("r5", [r for r in rows if "cross-lingual" in r["tags"]]),
                             "mrr": mean("mrr", [r for r in rows if "cross-lingual" in r["tags"]])},
           "current_first": f"{sum(r['current_first'] for r in current)}/{len(current)}",
           "misses": [f"{r['query']} (mrr {r['mrr']:.2f})" for r in rows if r["mrr"] < 1]}
    return out, contexts


def supersession(facts: list[dict], cards: list[CardView]) -> dict[str, Any]:
    """Pairs (old value → new value): the old fact's card holds a superseded claim with
    valid_until, and the new fact's card links SUPERSEDES to it."""
    by_id = {f["id"]: f for f in facts}
    pairs, done = [], []
    for f in facts:
        if not f.get("superseded_by") or f["superseded_by"] not in by_id:
            continue
        new = by_id[f["superseded_by"]]

        def covering(fact: dict) -> list[CardView]:
            ps = [norm(p) for p in fact["key_phrases"]]
            return [c for c in cards if fact["session"] in c.sessions
                    and all(p in c.text for p in ps)]
        old_cards, new_cards = covering(f), covering(new)
        stems = {Path(c.path).stem for c in old_cards}
        ok = any(any(cl["status"] == "superseded" and cl["valid_until"] for cl in c.claims)
                 for c in old_cards) and any(
            rel == "SUPERSEDES" and target.split("/")[-1] in stems
            for c in new_cards for rel, target in c.relations)
        pairs.append(f"{f['id']} → {new['id']}")
        if ok:
            done.append(pairs[-1])
    return {"pairs": len(pairs), "superseded": len(done),
            "missing": [p for p in pairs if p not in done]}


def load(path: Path, name: str) -> list[dict]:
    p = path / f"{name}.json"
    return json.loads(p.read_text("utf-8")) if p.exists() else []


def run_set(name: str, path: Path, workdir: Path, embedder: Any,
            no_recall: bool = False, mode: str = "hybrid") -> dict[str, Any]:
    files = sorted((path / "sessions").glob("*.json"))
    inputs = [(f.name, f.read_bytes()) for f in files]
    turn_text = {}
    for f in files:
        data = json.loads(f.read_text("utf-8"))
        for i, t in enumerate(data["turns"], 1):
            turn_text[(data["id"], f"t{i}")] = t["content"]
    facts, questions = load(path, "facts"), load(path, "questions")
    vault = build(workdir / name, inputs, embedder, compile_it=bool(questions) and not no_recall,
                  timezone="Asia/Shanghai" if name.startswith("zh") else "")
    cards = card_views(vault)
    out: dict[str, Any] = {"sessions": len(files), "cards": len(cards),
                           "card_types": dict(sorted(_count(c.type for c in cards).items()))}
    if facts:
        out["facts"] = coverage(facts, cards)
        if any(f.get("superseded_by") for f in facts):
            out["supersession"] = supersession(facts, cards)
    out["titles"] = junk_titles(cards, turn_text)
    contexts: dict[str, str] = {}
    if questions and not no_recall:
        out["recall"], contexts = recall_metrics(vault, questions, embedder, mode)
    secrets, injections = load(path, "secrets"), load(path, "injections")
    if secrets or injections:
        out["leaks"] = leaks(vault, secrets, injections, contexts)
    negatives = load(path, "negatives")
    if negatives:
        out["negatives"] = negative_hits(negatives, cards)
    return out


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def run_locomo(path: Path, workdir: Path, embedder: Any, no_recall: bool = False) -> dict[str, Any]:
    from benchmarks.locomo import evaluate, session_json, summarise

    rows, observed, cited, all_cards, junk = [], 0, 0, 0, []
    for conv_path in sorted(path.glob("conv-*.json")):
        sample = json.loads(conv_path.read_text())
        name = conv_path.stem
        numbers = sorted(int(k.split("_")[1]) for k in sample
                         if k.startswith("session_") and k.count("_") == 1)
        inputs = [(f"{name}-s{n}.json", json.dumps(session_json(sample, name, n)).encode())
                  for n in numbers]
        vault = build(workdir / "locomo" / name, inputs, embedder, compile_it=not no_recall)
        cards = card_views(vault)
        all_cards += len(cards)
        turn_text, dia_turn = {}, {}
        for n in numbers:
            for i, t in enumerate(sample[f"session_{n}"], 1):
                turn_text[(f"{name}-s{n}", f"t{i}")] = t["text"]
                dia_turn[t["dia_id"]] = (f"{name}-s{n}", f"t{i}")
        cited_turns = {t for c in cards for t in c.turns}
        for n in numbers:
            for _speaker, items in (sample.get(f"session_{n}_observation") or {}).items():
                for _text, dia in items:
                    for d in ([dia] if isinstance(dia, str) else dia):
                        if d in dia_turn:
                            observed += 1
                            cited += dia_turn[d] in cited_turns
        junk += junk_titles(cards, turn_text)["junk"]
        if not no_recall:
            rows += evaluate(vault, name, sample, embedder, "hybrid", RecallSettings())
    out: dict[str, Any] = {
        "cards": all_cards, "observations": observed,
        "observation_turns_cited": round(cited / observed, 3) if observed else 0.0,
        "junk_titles": round(len(junk) / all_cards, 3) if all_cards else 0.0,
        "junk_examples": junk[:20]}
    if rows:
        recall_summary = summarise(rows)
        out["recall_sessions_only"] = {k: recall_summary["all"][k] for k in ("r5", "r10", "mrr")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=["zh-dev", "agentops", "agentops-heldout"],
                    choices=sorted(SETS))
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/alaya-distill-quality"))
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--brief", action="store_true", help="numbers only, no lists of misses")
    ap.add_argument("--mode", default="hybrid", choices=["hybrid", "bm25", "vector"],
                    help="recall mode for the questions (default hybrid)")
    ap.add_argument("--no-recall", action="store_true",
                    help="cards only: skip the compile, recall and context (fast)")
    args = ap.parse_args()
    embedder = LocalEmbedder()
    results: dict[str, Any] = {}
    for name in args.sets:
        print(f"  {name} …", file=sys.stderr)
        if name == "locomo":
            results[name] = run_locomo(SETS[name], args.workdir, embedder, args.no_recall)
        else:
            results[name] = run_set(name, SETS[name], args.workdir, embedder, args.no_recall,
                                    args.mode)
    if args.brief:
        results = _brief(results)
    report(results, args.out)


def _brief(results: dict[str, Any]) -> dict[str, Any]:
    drop = {"missed", "wrong_type", "junk", "found", "violating", "misses", "missing",
            "junk_examples", "by_type"}

    def strip(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if k not in drop}
        return obj
    return strip(results)


if __name__ == "__main__":
    main()
