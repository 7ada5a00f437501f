"""The quality gate: what never reaches a distiller (seed 004 L1, seed 003 §3.1 hard rules).

Runs before any model call. A turn is dropped when it is empty, symbols only, chit-chat, or
looks like a prompt injection ("ignore previous instructions", "you are now …"); a session is
skipped when it has no user message or nothing substantive is left.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vault_engine.store.model import Turn

INJECTION_RE = re.compile(
    r"(?i)(ignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+"
    r"(?:instructions?|prompts?|rules|messages)"
    r"|disregard\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|your)\s+\w+"
    r"|forget\s+(?:all\s+|everything\s+|your\s+)(?:previous\s+)?(?:instructions?|rules|you were told)"
    r"|you\s+are\s+now\s+(?:a|an|in|the)\b|new\s+system\s+prompt|reveal\s+(?:your|the)\s+"
    r"(?:system\s+)?prompt|\bjailbreak|do\s+anything\s+now|developer\s+mode\s+enabled"
    r"|</?(?:system|assistant)>|\[\[?system\]?\]|"
    r"忽略(?:之前|以上|前面|所有)的?(?:指令|提示|说明|规则)|你现在是|无视(?:之前|以上)的?(?:指令|规则))")
CHITCHAT_WORDS = frozenset("""
hi hello hey yo thanks thank you thx ty ok okay k cool great nice awesome bye goodbye good
morning night evening afternoon lol haha hahaha yes yeah yep no nope sure np welcome cheers
please pls sounds perfect got it alright right fine wow oh ah hmm uh um see ya later
""".split()) | {"好的", "谢谢", "嗯", "哈哈", "好", "收到", "拜拜", "你好", "早", "晚安", "行", "可以"}
_WORD_RE = re.compile(r"[\w\u4e00-\u9fff]+", re.UNICODE)


def turn_gate(text: str) -> str | None:
    """Why this turn must not be distilled, or None when it may be."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    words = _WORD_RE.findall(stripped.lower())
    if not words:
        return "symbols only"
    if INJECTION_RE.search(stripped):
        return "prompt injection"
    if len(words) <= 4 and all(w in CHITCHAT_WORDS for w in words):
        return "chit-chat"
    return None


def session_gate(turns: Sequence[Turn], kept: Sequence[Turn]) -> str | None:
    if not any(t.role in ("user", "human") for t in turns):
        return "no user message"
    if not kept:
        return "nothing substantive after the quality gate"
    return None
