"""Chinese words: a maintained dictionary segmenter (jieba's dictionary and algorithm, run by
rjieba, the Rust port) behind two small functions.

rjieba loads its dictionary in ~0.1 s at import and cuts a sentence in microseconds; jieba
itself needs ~2 s to build its prefix dictionary in every new process, which a one-shot
`alaya recall` cannot pay. Both give the same words (the same dictionary and HMM). The
segmenter is rjieba's own default one, built when rjieba is imported: a second
`rjieba.Jieba()` would load the dictionary again (another ~0.1 s of a Chinese recall).

Words that matter to our users and that the general dictionary splits (on-call and release
vocabulary, common cue words) are added once at first use (`_EXTRA_WORDS`).

A process that has not loaded the dictionary cuts its first short runs (a query's) with a
segmenter built for each run from the machine's word table (`text.wordtable`): the same words
in a millisecond instead of the dictionary's 0.1 s. A process that cuts more than
`_TABLE_RUNS` runs, or a long one, loads the dictionary once, and the first process that
loads it writes the table if the machine has none.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# compiled on use (re caches it): a class of ~28,000 code points costs a millisecond to build
_HAN = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"

# words the general dictionary cuts apart, that our sessions use as one word
_EXTRA_WORDS = (
    "发版", "上线", "回滚", "值班", "交接", "二线", "主值班", "换班", "调休", "封板", "灰度",
    "根因", "踩坑", "止血", "扩容", "缩容", "告警", "复盘", "入职", "离职", "年假", "请假",
    "出差", "搬家", "生日", "团建", "连接池", "连接数", "慢查询", "联合索引", "单测", "热修",
    "就好了", "恢复了", "修好了", "不生效", "没生效", "不要", "以后都", "每次都", "务必",
    "一定要", "问题出在", "原因是", "根因是", "改成", "换成", "改用", "选定", "定下来",
)


_EXTRA_FREQ = 200000
_TABLE_RUNS = 64  # runs cut from the table before a process loads the whole dictionary
_TABLE_LONGEST = 40  # a longer run has too many substrings to look up one by one
_table_runs = 0
_table_cuts: dict[str, list[str]] = {}  # a query is tokenized more than once


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    """rjieba's default segmenter (its module functions), with _EXTRA_WORDS added."""
    import rjieba

    from .wordtable import build_table

    for word in _EXTRA_WORDS:
        rjieba.add_word(word, _EXTRA_FREQ, None)
    build_table(rjieba, _EXTRA_WORDS, _EXTRA_FREQ)
    return rjieba


def _cut(run: str) -> list[str]:
    global _table_runs
    if _segmenter.cache_info().currsize == 0 and len(run) <= _TABLE_LONGEST \
            and _table_runs < _TABLE_RUNS:
        from .wordtable import open_table

        table = open_table(_EXTRA_WORDS)
        if table is not None:
            if run not in _table_cuts:
                _table_runs += 1
                _table_cuts[run] = table.cut(run)
            return list(_table_cuts[run])
    return list(_segmenter().cut(run, True))


def han_words(run: str) -> list[str]:
    """The words of one run of Han characters."""
    if len(run) <= 1:
        return [run] if run else []
    return [w for w in _cut(run) if w.strip()]


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every word of `text`'s Han runs, and of each Latin/number token: a cut
    between two spans is a word boundary."""
    spans: list[tuple[int, int]] = []
    for m in re.finditer(_HAN + r"|[A-Za-z0-9_]+", text):
        if re.fullmatch(_HAN, m.group(0)):
            pos = m.start()
            for w in _cut(m.group(0)):
                spans.append((pos, pos + len(w)))
                pos += len(w)
        else:
            spans.append((m.start(), m.end()))
    return spans
