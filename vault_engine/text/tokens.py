"""Tokenisation for the BM25 index: the same function at compile time and at query time.

- Latin-script words: lowercased, stopwords dropped (bm25s's extended English list plus
  question words), Snowball-stemmed (PyStemmer) — "restarted", "restarts" → "restart".
- Chinese runs: jieba words (rjieba, `text.words`), function and question words dropped
  (的 了 吗 什么 哪 …). Measured against overlapping character bigrams (Lucene's CJK analyzer,
  the earlier choice) on benchmarks/zh dev: hybrid recall MRR 0.891 against 0.861 at the same
  R@5 0.907, BM25 alone MRR 0.879 against 0.871 (docs/benchmarks.md). Bigrams match across
  word boundaries (用户希望我用什么语言 → 望我, 我用, 么语 …) and drown the words that matter.
  The segmenter is loaded only when a text has Chinese in it.
- kana and Hangul runs: overlapping character bigrams. A single CJK character stands alone.
- Numbers are kept whole ("2026", "8080").
"""

from __future__ import annotations

import re
from functools import lru_cache

# A token is a run of CJK characters (the ranges below) or a word of letters and digits with
# at most one inner apostrophe — scanned left to right, a CJK run first, as the regex
#   [<the CJK ranges>]+|[^\W_]+(?:['’][^\W_]+)?
# would. That character class is never compiled: re builds it code point by code point
# (~40,000 of them, over a millisecond of every one-shot recall). `_words` finds the same
# tokens with patterns whose classes are categories — words, or any other non-space
# character (a CJK character that is not a word character, such as ・ or an unassigned code
# point, among them) — and reads the CJK runs itself.
_LATIN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")  # a text without CJK characters
_SCAN_RE = re.compile(r"([^\W_]+(?:['’][^\W_]+)?)|[^\w\s]")
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
               (0xAC00, 0xD7AF))
_CJK_FIRST = chr(_CJK_RANGES[0][0])


def _is_cjk(ch: str) -> bool:
    return ("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\u3040" <= ch <= "\u30ff"
            or "\uac00" <= ch <= "\ud7af" or "\uf900" <= ch <= "\ufaff")  # _CJK_RANGES


def _is_han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def _words(text: str) -> list[str]:
    """The tokens of `text` before stopwords, stems and aliases (see _SCAN_RE)."""
    if not text or max(text) < _CJK_FIRST:
        return _LATIN_RE.findall(text)
    out: list[str] = []
    pos, n = 0, len(text)
    while pos < n:
        for m in _SCAN_RE.finditer(text, pos):
            start = m.start()
            if text[start] >= _CJK_FIRST and _is_cjk(text[start]):
                # a CJK run, wherever the match ended; the scan goes on after the run
                end = start + 1
                while end < n and _is_cjk(text[end]):
                    end += 1
                out.append(text[start:end])
                if end != m.end():
                    pos = end
                    break
                continue
            word = m.group(1)
            if word is not None:
                out.append(word)
        else:
            break
    return out


EXTRA_STOPWORDS = frozenset({
    "would", "could", "might", "shall", "may", "must", "also", "yes", "ok", "okay", "yeah",
    "oh", "hey", "hi", "please", "thanks", "thank", "like", "really", "get", "got", "go",
    "going", "know", "think", "much", "many", "one", "thing", "things", "something",
    "anything", "whose", "ever", "us", "let",
})


# bm25s's extended English list (`bm25s.stopwords.STOPWORDS_EN_PLUS`, tests/test_lexical.py
# checks it is the installed one's), written out: loading it from bm25s costs a one-shot recall
# 2–4 ms (importing the package asks importlib.metadata for its version; even its stopwords
# module alone builds the lists of a dozen languages).
BM25S_STOPWORDS_EN_PLUS = frozenset({
    "a", "about", "above", "after", "again", "against", "ain", "all", "am", "an", "and",
    "any", "are", "aren", "aren't", "as", "at", "be", "because", "been", "before", "being",
    "below", "between", "both", "but", "by", "can", "couldn", "couldn't", "d", "did", "didn",
    "didn't", "do", "does", "doesn", "doesn't", "doing", "don", "don't", "down", "during",
    "each", "few", "for", "from", "further", "had", "hadn", "hadn't", "has", "hasn", "hasn't",
    "have", "haven", "haven't", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "isn't", "it", "it's",
    "its", "itself", "just", "ll", "m", "ma", "me", "mightn", "mightn't", "more", "most",
    "mustn", "mustn't", "my", "myself", "needn", "needn't", "no", "nor", "not", "now", "o",
    "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
    "over", "own", "re", "s", "same", "shan", "shan't", "she", "she's", "should", "should've",
    "shouldn", "shouldn't", "so", "some", "such", "t", "than", "that", "that'll", "the",
    "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
    "those", "through", "to", "too", "under", "until", "up", "ve", "very", "was", "wasn",
    "wasn't", "we", "were", "weren", "weren't", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "won", "won't", "wouldn", "wouldn't", "y", "you",
    "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves",
})


def _stopwords() -> frozenset[str]:
    """Words the tokenizer drops: bm25s's extended English list and EXTRA_STOPWORDS."""
    return _STOPWORDS


_STOPWORDS = BM25S_STOPWORDS_EN_PLUS | EXTRA_STOPWORDS


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


# one token for the spellings of one system (vault_engine.text.entities.ALIASES, one word each)
TOKEN_ALIASES = {"pg": "postgresql", "postgres": "postgresql", "postgresql": "postgresql",
                 "psql": "postgresql", "k8s": "kubernetes", "kube": "kubernetes",
                 "kubernetes": "kubernetes", "mongo": "mongodb", "golang": "go",
                 "argocd": "argo"}
_VERSIONED = re.compile(r"([a-z]+)(\d{1,2})")
# function words and question words: in every question, they find nothing
ZH_STOPWORDS = frozenset("""的 了 是 在 和 与 及 或 也 都 就 还 又 把 被 给 跟 对 从 到 向 为 以 于 而 但
吗 呢 吧 啊 呀 哦 嗯 么 什么 怎么 怎样 为什么 哪 哪个 哪些 哪种 哪里 哪天 哪儿 几 多少 谁 如何 是否
有没有 这 那 这个 那个 这些 那些 我 你 他 她 它 我们 你们 他们 她们 自己 一个 一下 个 些 会 能 可以
要 得 着 过 之 其 该 等 时 现在 一些 时候""".split())


def _cjk_tokens(run: str) -> list[str]:
    """The words of a run of Chinese (jieba's dictionary, `text.words`), function words out;
    kana and Hangul runs, which the dictionary does not cover, as bigrams."""
    if len(run) == 1:
        return [run]
    if not all(_is_han(ch) for ch in run):
        return [run[i:i + 2] for i in range(len(run) - 1)]
    from .words import han_words

    return [w for w in han_words(run) if w not in ZH_STOPWORDS]


def tokenize(text: str, *, stem: bool = True) -> list[str]:
    stop = _stopwords()
    out: list[str] = []
    for tok in _words(text.lower()):
        if _is_cjk(tok[0]):
            out.extend(_cjk_tokens(tok))
            continue
        tok = tok.replace("’", "'")
        if tok in stop:
            continue
        m_ver = _VERSIONED.fullmatch(tok)
        if m_ver and m_ver.group(1) in TOKEN_ALIASES:  # pg16 → postgresql 16
            out.extend((TOKEN_ALIASES[m_ver.group(1)], m_ver.group(2)))
            continue
        if tok in TOKEN_ALIASES:  # one name for one system: pg, postgres → postgresql
            out.append(TOKEN_ALIASES[tok])
            continue
        if "'" in tok:
            tok = tok.split("'", 1)[0]
            if not tok or tok in stop:
                continue
        out.append(_stem(tok) if stem and not tok.isdigit() else tok)
    return out
