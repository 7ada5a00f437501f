"""Tokenisation for the BM25 index: the same function at compile time and at query time.

- Latin-script words: lowercased, stopwords dropped (bm25s's extended English list plus
  question words), Snowball-stemmed (PyStemmer) — "restarted", "restarts" → "restart".
- CJK runs (Han, kana, Hangul): overlapping character bigrams, the approach of Lucene's CJK
  analyzer; no dictionary to load, robust to words a dictionary does not know. A single CJK
  character stands alone.
- Numbers are kept whole ("2026", "8080").
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD_RE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+"  # CJK runs
    r"|[^\W_]+(?:['’][^\W_]+)?",  # words (letters/digits), with an inner apostrophe
    re.UNICODE)
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")

EXTRA_STOPWORDS = frozenset({
    "would", "could", "might", "shall", "may", "must", "also", "yes", "ok", "okay", "yeah",
    "oh", "hey", "hi", "please", "thanks", "thank", "like", "really", "get", "got", "go",
    "going", "know", "think", "much", "many", "one", "thing", "things", "something",
    "anything", "whose", "ever", "us", "let",
})


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    try:
        from bm25s.stopwords import STOPWORDS_EN_PLUS
    except ImportError:  # pragma: no cover - bm25s is a dependency
        STOPWORDS_EN_PLUS = ()
    return frozenset(STOPWORDS_EN_PLUS) | EXTRA_STOPWORDS


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


def tokenize(text: str, *, stem: bool = True) -> list[str]:
    stop = _stopwords()
    out: list[str] = []
    for m in _WORD_RE.finditer(text.lower()):
        tok = m.group(0)
        if _CJK_RE.match(tok):
            if len(tok) == 1:
                out.append(tok)
            else:
                out.extend(tok[i:i + 2] for i in range(len(tok) - 1))
            continue
        tok = tok.replace("’", "'")
        if tok in stop:
            continue
        if "'" in tok:
            tok = tok.split("'", 1)[0]
            if not tok or tok in stop:
                continue
        out.append(_stem(tok) if stem and not tok.isdigit() else tok)
    return out
