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
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
               (0xAC00, 0xD7AF))


def _is_cjk(ch: str) -> bool:
    """The ranges of _WORD_RE's CJK run (a compiled character class of them costs ~3 ms at
    import, paid by every recall process)."""
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)

EXTRA_STOPWORDS = frozenset({
    "would", "could", "might", "shall", "may", "must", "also", "yes", "ok", "okay", "yeah",
    "oh", "hey", "hi", "please", "thanks", "thank", "like", "really", "get", "got", "go",
    "going", "know", "think", "much", "many", "one", "thing", "things", "something",
    "anything", "whose", "ever", "us", "let",
})


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    """bm25s's extended English list, read from its module file without importing the bm25s
    package (whose __init__ asks importlib.metadata for its version: ~25 ms on every recall)."""
    import importlib.util

    words: tuple[str, ...] = ()
    spec = importlib.util.find_spec("bm25s")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            sub = importlib.util.spec_from_file_location("_alaya_bm25s_stopwords",
                                                         f"{folder}/stopwords.py")
            if sub is not None and sub.loader is not None:
                module = importlib.util.module_from_spec(sub)
                sub.loader.exec_module(module)
                words = tuple(getattr(module, "STOPWORDS_EN_PLUS", ()))
                break
    return frozenset(words) | EXTRA_STOPWORDS


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
        if _is_cjk(tok[0]):
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
