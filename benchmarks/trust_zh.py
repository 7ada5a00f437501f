"""Secrets and injections on the Chinese (code-mixed) set, benchmarks/zh: how many planted
secrets redaction removes, how many planted injections the detector flags, and how many other
turns either touches (false positives) — on `dev` (what the rules were checked against) and,
reported once, on `heldout` (never used to change a rule).

A secret counts as caught when no 8-character piece of its value survives `redact_input` of
the session file (the raw file ingest keeps); an injection when its turn is flagged. False
positives: redactions in turns with no planted secret, flags on turns with no planted
injection, over every turn of the split (and LoCoMo's English chat when it is on disk).
`heldout2` is a second check set, written later by someone who never read the rules.

    .venv/bin/python benchmarks/trust_zh.py --split dev heldout heldout2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vault_engine.text.injection import injection_reason  # noqa: E402
from vault_engine.text.secrets import find_secrets, redact_input  # noqa: E402

ZH = ROOT / "benchmarks" / "zh"
LOCOMO = Path("/work/shared/data/locomo-dev")


def survives(value: str, text: str) -> bool:
    pieces = [value] if len(value) < 8 else [value[i:i + 8] for i in range(len(value) - 7)]
    return any(p in text for p in pieces)


def split(name: str) -> dict[str, object]:
    folder = ZH / name
    secrets = json.loads((folder / "secrets.json").read_text(encoding="utf-8"))
    injections = json.loads((folder / "injections.json").read_text(encoding="utf-8"))
    sessions = {p.stem: p for p in (folder / "sessions").glob("*.json")}
    caught = []
    for s in secrets:
        redacted = json.loads(redact_input(sessions[s["session"]].read_bytes()))
        turn = redacted["turns"][s["turn"] - 1]["content"]
        caught.append({"kind": s["kind"], "caught": not survives(s["value"], turn)})
    flagged = []
    for i in injections:
        turns = json.loads(sessions[i["session"]].read_text(encoding="utf-8"))["turns"]
        flagged.append({"note": i["note"], "flagged": bool(injection_reason(
            turns[i["turn"] - 1]["content"]))})
    planted_s = {(s["session"], s["turn"]) for s in secrets}
    planted_i = {(i["session"], i["turn"]) for i in injections}
    turns = secret_fp = inj_fp = 0
    start = time.perf_counter()
    chars = 0
    for sid, path in sorted(sessions.items()):
        for n, t in enumerate(json.loads(path.read_text(encoding="utf-8"))["turns"], 1):
            turns += 1
            chars += len(t["content"])
            if (sid, n) not in planted_s and find_secrets(t["content"]):
                secret_fp += 1
            if (sid, n) not in planted_i and injection_reason(t["content"]):
                inj_fp += 1
    ms = (time.perf_counter() - start) * 1000
    return {"split": name, "secrets": len(caught), "secrets_caught": sum(c["caught"] for c in caught),
            "missed_kinds": [c["kind"] for c in caught if not c["caught"]],
            "injections": len(flagged), "injections_flagged": sum(f["flagged"] for f in flagged),
            "missed_injections": [f["note"] for f in flagged if not f["flagged"]],
            "turns": turns, "turns_with_a_false_secret": secret_fp,
            "turns_falsely_flagged": inj_fp, "scan_ms": round(ms, 1), "chars": chars}


def locomo() -> dict[str, object] | None:
    files = sorted(LOCOMO.glob("*.json")) if LOCOMO.is_dir() else []
    if not files:
        return None
    turns = secret_fp = inj_fp = 0
    for f in files:
        conv = json.loads(f.read_text(encoding="utf-8"))
        conv = conv.get("conversation", conv) if isinstance(conv, dict) else {}
        for value in conv.values():
            for t in value if isinstance(value, list) else []:
                if isinstance(t, dict) and isinstance(t.get("text"), str):
                    turns += 1
                    secret_fp += bool(find_secrets(t["text"]))
                    inj_fp += bool(injection_reason(t["text"]))
    return {"split": "locomo-dev (English chat, nothing planted)", "turns": turns,
            "turns_with_a_false_secret": secret_fp, "turns_falsely_flagged": inj_fp}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", nargs="+", default=["dev"], choices=["dev", "heldout", "heldout2", "heldout3"])
    args = parser.parse_args()
    find_secrets("warm up the detector: token")
    rows = [split(s) for s in args.split]
    extra = locomo()
    if extra:
        rows.append(extra)
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))


if __name__ == "__main__":
    main()
