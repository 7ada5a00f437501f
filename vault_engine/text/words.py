"""Chinese words: a maintained dictionary segmenter (jieba's dictionary and algorithm, run by
rjieba, the Rust port) behind two small functions.

rjieba loads its dictionary in ~0.1 s at import and cuts a sentence in microseconds; jieba
itself needs ~2 s to build its prefix dictionary in every new process, which a one-shot
`alaya recall` cannot pay. Both give the same words (the same dictionary and HMM). The
segmenter is rjieba's own default one, built when rjieba is imported: a second
`rjieba.Jieba()` would load the dictionary again (another ~0.1 s of a Chinese recall).

Words that matter to our users and that the general dictionary splits (on-call and release
vocabulary, common cue words) are added once at first use (`_EXTRA_WORDS`).
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


@lru_cache(maxsize=1)
def _segmenter() -> Any:
    """rjieba's default segmenter (its module functions), with _EXTRA_WORDS added."""
    import rjieba

    for word in _EXTRA_WORDS:
        rjieba.add_word(word, 200000, None)
    return rjieba


def han_words(run: str) -> list[str]:
    """The words of one run of Han characters."""
    if len(run) <= 1:
        return [run] if run else []
    return [w for w in _segmenter().cut(run, True) if w.strip()]


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every word of `text`'s Han runs, and of each Latin/number token: a cut
    between two spans is a word boundary."""
    spans: list[tuple[int, int]] = []
    for m in re.finditer(_HAN + r"|[A-Za-z0-9_]+", text):
        if re.fullmatch(_HAN, m.group(0)):
            pos = m.start()
            for w in _segmenter().cut(m.group(0), True):
                spans.append((pos, pos + len(w)))
                pos += len(w)
        else:
            spans.append((m.start(), m.end()))
    return spans
