"""After ranking, which turns a session hit shows (its anchors): its best turns by fused
score, except that a turn by someone other than the person the question names, and a turn
that mostly asks, count for less. The session's score and rank do not change.

"What activities does Melanie partake in?" is answered by Melanie's "I'm off to go swimming
with the kids", not by a question Caroline asked her — which matches the question better,
being one. An answer is shown with the turn before it (`present.node_json`), so the
question it answers is still there."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from .fusion import SESSION_TURN_WEIGHTS, Hit, question_names
from .index import RecallIndex

ASKS_SHARE = 0.5  # a turn whose questions are at least this share of its text "mostly asks"


@cache
def _sentences() -> re.Pattern[str]:
    return re.compile(r"[^.!?。！？]+[.!?。！？]*")


def said(index: RecallIndex, unit: int) -> tuple[str | None, str]:
    """Who said a session turn and what (its line: "[2023-05-08] Melanie: …"); (None, "")
    for a unit that is not a session turn."""
    row = index.row(unit)
    if row.get("kind") != "session":
        return None, ""
    line = str(row.get("snippet") or "")
    if line.startswith("["):  # its date
        line = line.partition("] ")[2]
    name, colon, text = line.partition(": ")
    return (name.strip() or None, text) if colon else (None, line)


def mostly_asks(text: str) -> bool:
    """Is a turn mostly a question ("Wow! What game were you playing?", "你去过哪些地方？")?
    A trailing attachment in brackets ("[shares a photo: …]") is not part of what it says."""
    text = re.sub(r"\s*\[[^\]]*\]\s*$", "", text).strip()
    if "?" not in text and "？" not in text:
        return False
    asked = sum(len(s) for s in _sentences().findall(text) if s.rstrip().endswith(("?", "？")))
    return asked >= ASKS_SHARE * len(text)


def show_turns(index: RecallIndex, ranked: Sequence[Hit], fused: dict[int, float], text: str,
               other_speaker: float, asking: float) -> None:
    """Choose the turns each session hit shows: by fused score, a turn by someone other than
    the people the question names (when it names someone who spoke in the session) ×
    `other_speaker`, a turn that mostly asks × `asking` (each at most 1.0: 1.0 and 1.0 keep the
    best turns)."""
    other_speaker, asking = min(1.0, other_speaker), min(1.0, asking)
    if (other_speaker == 1.0 and asking == 1.0) or not text:
        return
    from vault_engine.text.names import name_forms

    shown = {h.node: h for h in ranked if h.units and index.node_kind(h.node) == "session"}
    if not shown:
        return
    names = question_names(text)
    named_in = {n: {f for f in index.node_speakers(n) if names(f)} for n in shown}
    units: dict[int, list[tuple[int, float]]] = {}
    for unit, score in fused.items():
        node = int(index.unit_node[unit])
        if node in shown:
            units.setdefault(node, []).append((unit, score))
    is_named: dict[tuple[str, int], bool] = {}

    def weight(node: int, unit: int) -> float:
        who, line = said(index, unit)
        w = asking if asking < 1.0 and mostly_asks(line) else 1.0
        if named_in[node] and who is not None and other_speaker < 1.0:
            if (who, node) not in is_named:
                is_named[(who, node)] = bool(name_forms(who) & named_in[node])
            w *= 1.0 if is_named[(who, node)] else other_speaker
        return w

    keep = len(SESSION_TURN_WEIGHTS)
    for node, turns in units.items():
        # best first; a weight is at most 1, so once a turn's own score is below the
        # weighted score of the last turn kept, no turn after it can be kept
        turns.sort(key=lambda t: (-t[1], t[0]))
        best: list[tuple[float, int, tuple[int, float]]] = []
        for turn in turns:
            if len(best) == keep and turn[1] < best[-1][0]:
                break
            best.append((turn[1] * weight(node, turn[0]), len(best), turn))
            best.sort(key=lambda b: (-b[0], b[1]))
            del best[keep:]
        chosen = [b[2] for b in best]
        if chosen != turns[:keep]:
            shown[node].units = chosen
