"""How much two pieces of text say the same thing, for Chinese and English alike — what
passive validation and dreaming's Light phase ask of a turn and a memory (seed 003 §3.3.4).

`terms` are the tokenizer's content words (English stemmed, stopwords dropped; Chinese as
jieba words, kana and Hangul as bigrams — text/tokens.py); `overlap` is the overlap
coefficient |A ∩ B| / min(|A|, |B|) — how much of the shorter text the longer one contains,
which is what "does this turn restate that claim" asks (a long turn restating a short claim
scores high; Jaccard would not).
"""

from __future__ import annotations

from .tokens import tokenize


def terms(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
