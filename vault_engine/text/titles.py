"""Titles cut from a sentence: whole clauses, no filler in front, never cut inside a word or an
identifier, about 30 Chinese characters or 80 Latin ones, in the language of the sentence.

- **Filler** in front is dropped, repeatedly: interjections and acknowledgements (可以。 好。
  嗯。 对了， 另外， 还有个事， OK, So, Well, Thanks, Good catch.), hand-overs (跟你说下， 顺便)
  and labels that only name what follows (决定了： 踩过的坑： 最后记一下： Decision: Heads up:).
- **Clauses** are taken from the start while they fit the budget — a Chinese character counts
  1/30 of it, a Latin character 1/80. When the first clause alone is too long it is cut at the
  last word boundary that fits (jieba words for Chinese, never inside inline code, a path, a
  URL or a dotted or hyphenated identifier) and marked with "…".
- A dangling word at the end (的 和 与 因为 / and, the, to, with …) is dropped.
"""

from __future__ import annotations

import re

from .segment import _bracketed, _protected, clause_spans

# acknowledgements and discourse openers: never part of what a sentence says
INTERJECTION_RE = re.compile(
    r"(?i)^(?:(?:可以|好的?|嗯+|行|对|是的|没错|收到|明白了?|了解|懂了|ok(?:ay)?|哦|噢|啊|诶|嘿|哈+"
    r"|你好|您好|hi|hello|hey|yes|yeah|yep|sure|thanks|thank\s+you|great|perfect|good\s+catch"
    r"|fair|agreed|got\s+it|oh|yeah)[。.!！,，~～]+\s*"
    r"|(?:对了|另外|还有(?:个事|一件事|件事|一点)?|然后|其实|那么?|顺便(?:说一下|提一下)?"
    r"|补充(?:一下|一点)?|跟你说(?:下|一下|个事|个变更)?|最后(?:一个|一点|一条)?)[，,：:。.\s]+"
    r"|(?:so|well|also|and|but|right|hmm+|btw|actually|anyway|by\s+the\s+way|heads\s+up|fyi"
    r"|ps|one\s+more\s+thing)[,:.!—–-]+\s*"
    r"|(?:and|but|also|then)\s+)")
# labels and lead-ins that only name what follows: dropped from titles (classification reads them)
LABEL_RE = re.compile(
    r"(?i)^(?:(?:所以|先说(?:一下)?|说一下|提醒一下|提醒一点|记一下|最后记一下|这个坑记一下|记下了|决定了"
    r"|检查一下|确认一下|看一下|补充一下|更正一下|顺便说一下|供参考"
    r"|定了|就这么定了|踩过的坑|结论|总结|备注|注意|PS|P\.S\.|原因)[，,：:。.\s]+"
    r"|(?:note|one\s+preference|decision(?:\s+on\s+[^:]{1,40})?|update|reminder)[,:.!—–-]+\s*"
    r"|so\s+"
    r"|(?:the\s+(?:real\s+)?(?:problem|issue|cause|root\s+cause|culprit|bug)\s+(?:was|is)"
    r"(?:\s+that)?|(?:it\s+)?turn(?:s|ed)\s+out(?:\s+that)?|(?:the\s+)?decision\s+(?:is|was)"
    r"(?:\s+to)?|we(?:'ll|\s+will)\s+go\s+with|remember\s+that|note\s+that|watch\s+out"
    r"|be\s+careful|from\s+now\s+on)[,:\s]+"
    r"|(?:根因|原因)(?:就)?是(?:这个)?[，,：:\s]*)")
_TRAIL_EN = re.compile(
    r"(?i)(?:\s+(?:so|and|or|but|with|the|a|an|to|of|for|before|after|then|that|which|if|"
    r"unless|when|by|on|in|at|is|are|was|were|not|using|from|again|does|do|did|has|have|had|"
    r"be|been|can|could|will|would|should|it|its|this|these|those|because|since|as))+$")
# a clause that begins with one of these gives a reason or a consequence: a title that already
# says something stops before it
_CONNECTIVE_RE = re.compile(
    r"(?i)^\s*(?:所以|因此|因为|由于|原因是|结果|导致|于是|不然|否则|以免|免得|比如|例如|包括"
    r"|so\b|because\b|since\b|which\b|as\s+a\s+result|otherwise\b|e\.g\.|i\.e\.|for\s+example"
    r"|including\b)")
# discourse tails that say nothing about the memory: "…again, by the way", "…吧", "…哈"
_TAIL_RE = re.compile(
    r"(?i)(?:[,，]?\s*\b(?:by\s+the\s+way|btw|anyway|anyways|though|please|thanks|thank\s+you|ok(?:ay)?"
    r"|haha|lol|as\s+well|for\s+sure|if\s+possible|if\s+you\s+can)\b\s*[.!]?"
    r"|\s+again(?=\s*[,，]\s*(?:by\s+the\s+way|btw|anyway))"
    r"|[，,]?\s*(?:顺便说(?:一?下)?|顺便提(?:一?下)?|对了|谢谢|谢啦|就这样|哈哈+)"
    r"|(?<=[\u4e00-\u9fff])(?:了哈|吧|哈|啊|呀|啦|嘛|哦|呢|噢))+$")
# a lead-in that only announces what follows ("Actually this is a good moment to settle
# something:", "Quick note on how I like to work:", "跟你说几件事：")
_PREAMBLE_RE = re.compile(
    r"(?i)^(?:[^:：]{0,40}\b(?:settle|decide|sort\s+out|clear\s+up|mention|share|tell\s+you)\s+"
    r"(?:something|a\s+few\s+things|one\s+thing|this)\b[^:：]{0,20}"
    r"|(?:a\s+)?(?:quick|short|small)?\s*(?:note|word|heads[- ]up|thing|things)\s+(?:on|about|regarding)\b"
    r"[^:：]{0,50}|(?:here'?s|here\s+is)\s+(?:the\s+thing|what\s+i\s+(?:want|need|think))[^:：]{0,20}"
    r"|(?:one|two|a\s+few|some)\s+(?:more\s+)?(?:things?|notes?|points?)[^:：]{0,30}"
    r"|[^：:]{0,8}(?:跟你)?(?:说|讲|提|交代|约定)(?:一下|几件事|几点|个事|两件事|件事)[^：:]{0,10}"
    r"|[^：:]{0,6}有(?:几|两|个)(?:件)?事[^：:]{0,8})[:：]\s*"
    # "(And) so you know which host we jump through — …", "FYI, …": for the reader, not the memory
    r"|(?i:^(?:and\s+)?(?:just\s+)?(?:so\s+)?you\s+know\b[^—:：]{0,60}(?:—|–|:|：)\s*|^(?:fyi|for\s+the\s+record|"
    r"for\s+reference)\b[,:：]?\s*)")
# words a clause may be cut before, keeping a whole phrase in front: prepositions and
# conjunctions, and in Chinese the words that open a reason, a condition or a phrase
_PHRASE_EN = re.compile(
    r"(?i)\s(?=(?:with|when|whenever|once|because|after|before|since|while|which|that|so|but|and|or"
    r"|for|on|in|at|by|from|until|unless|if|as|where|who|than|via|using|without|into|during|per)\b)"
    r"|\s?(?=[（(])")
_PHRASE_ZH = frozenset("因为 导致 所以 但是 但 而且 并且 然后 以后 之后 的时候 时候 如果 在 把 给 跟 和 与 从 "
                       "到 对 向 让 被 用 以 而 并 还 就 才 都 又 也 再 （".split())
# a head that ends like this still waits for its main clause ("…重构的时候", "when we deploy")
_SUBORDINATE_END_RE = re.compile(r"(?:的时候|时候|之时|之前|之后|以后|^如果[^，,]*)$")
_MARKUP_RE = re.compile(r"\*\*|__|^\s*(?:[-*•]\s+|\d{1,2}[.)、]\s*|#+\s+)")
_IDENT_CHARS = re.compile(r"[\w.@/:%+~#-]")


def strip_filler(text: str, *, labels: bool = True) -> str:
    """The sentence without the interjections (and, with `labels`, the labels and cue
    lead-ins) in front of what it says."""
    prev = None
    text = text.strip()
    while prev != text:
        prev = text
        text = INTERJECTION_RE.sub("", text, count=1).lstrip(" ，,：:。.")
        if labels:
            text = LABEL_RE.sub("", text, count=1).lstrip(" ，,：:。.")
    return text


def weight(text: str, *, words_only: bool = False) -> float:
    """Share of a title's budget: a Han character 1/30, any other character 1/80
    (`words_only`: URLs and inline code count nothing)."""
    if words_only:
        text = re.sub(r"https?://\S+|`[^`]*`", "", text)
    han = len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\u3000-\u303f\uff00-\uffef]", text))
    return han / 30 + (len(text) - han) / 80


def _cut_in_clause(clause: str, room: float) -> str:
    """The longest start of `clause` that fits `room` and ends at a word boundary."""
    from .words import word_spans

    protected = _protected(clause) + _bracketed(clause)
    ends = sorted({e for _, e in word_spans(clause)} | {m.start() for m in re.finditer(r"\s", clause)})
    best = 0
    for end in ends:
        if end <= 0 or weight(clause[:end]) > room:
            continue
        if any(a < end < b for a, b in protected):
            continue  # inside inline code, a URL, a path, an identifier
        if end < len(clause) and _IDENT_CHARS.match(clause[end - 1]) and \
                _IDENT_CHARS.match(clause[end]) and not clause[end].isspace() and \
                re.match(r"[A-Za-z0-9_]", clause[end - 1]) and re.match(r"[\w.-]", clause[end]):
            continue  # a Latin word or identifier goes on
        best = max(best, end)
    return clause[:best].rstrip()


_DANGLING_ZH = frozenset("的 和 与 及 或 或者 但 但是 而 因为 所以 就 在 把 对 给 跟 从 到 是 并 还 也 都 又".split())


def _strip_dangling_zh(title: str) -> str:
    """Drop a function word left at the end — a word of its own, never the end of a longer
    word (来不及 keeps its 及)."""
    from .words import word_spans

    m = re.search(r"[\u4e00-\u9fff]+$", title)
    if not m:
        return title
    spans = [(a, b) for a, b in word_spans(title) if a >= m.start()]
    if spans and title[spans[-1][0]:spans[-1][1]] in _DANGLING_ZH:
        return title[:spans[-1][0]]
    return title


def _cut_at_phrase(clause: str, room: float) -> str:
    """The longest start of `clause` that fits `room` and ends before a preposition, a
    conjunction or a bracket ("The deploy job failed at the migration step" | with `Error: …`),
    never inside a word or an identifier; "" when none leaves three words."""
    from .words import word_spans

    protected = _protected(clause) + _bracketed(clause)
    ends = {m.start() for m in _PHRASE_EN.finditer(clause)}
    ends |= {a for a, b in word_spans(clause) if clause[a:b] in _PHRASE_ZH}
    best = ""
    for end in sorted(ends):
        head = clause[:end].rstrip(" ，,")
        if not head or weight(head) > room or any(a < end < b for a, b in protected):
            continue
        if word_count(head) >= 3 and word_count(_tidy_end(head)) >= 3 and \
                not _SUBORDINATE_END_RE.search(head):
            best = head
    return _tidy_end(best) if best else ""


def _tidy_end(title: str) -> str:
    title = title.rstrip(" ，,；;：:、。.!！?？—–-")
    for _ in range(3):
        new = _TAIL_RE.sub("", title).rstrip(" ，,；;：:、。.!！—–-")
        new = _TRAIL_EN.sub("", _strip_dangling_zh(new)).rstrip(" ，,；;：:、—–-")
        if new == title or not new:
            break
        title = new
    return title


_CONDITION_RE = re.compile(r"(?i)^\s*(?:如果|假如|若|要是|当|(?:when|if|once|whenever|before|after|unless)\b|[（(])")


def _with_main_clause(title: str, text: str, budget: float) -> str:
    """A title that is only a subordinate clause ("给我命令的时候") takes the first main clause
    after it — joined when both fit, else the main clause alone."""
    if not title or title.endswith("…") or not (_SUBORDINATE_END_RE.search(title) or
                                                 _CONDITION_RE.match(title)):
        return title
    spans = clause_spans(text)
    used = next((i for i, (a, b) in enumerate(spans) if _tidy_end(text[:b]) == title), None)
    if used is None:
        return title
    for a, b in spans[used + 1:]:
        piece = _tidy_end(text[a:b]).strip()
        if not piece or _CONDITION_RE.match(piece) or _SUBORDINATE_END_RE.search(piece):
            continue
        if _CONNECTIVE_RE.match(piece):
            return title
        joined = f"{title}{'，' if re.search(r'[一-鿿]', title) else ', '}{piece}"
        return joined if weight(joined) <= budget else (piece if weight(piece) <= budget else title)
    return title


def make_title(sentence: str, budget: float = 1.0) -> str:
    """A title from a sentence (see the module docstring)."""
    text = _MARKUP_RE.sub("", sentence.strip())
    text = re.sub(r"\s+", " ", strip_filler(text)).strip()
    rest = _PREAMBLE_RE.sub("", text, count=1)
    if rest != text and word_count(rest) >= 3:
        text = strip_filler(rest)
    if not text:
        return "Untitled"
    title = ""
    for a, b in clause_spans(text):  # inline code is protected here, its backticks go later
        piece = text[a:b]
        if title and weight(title) >= 0.25 and _CONNECTIVE_RE.match(piece):
            break
        candidate = title + piece
        if weight(_tidy_end(candidate)) <= budget:
            title = candidate
            continue
        if not title or weight(title) < 0.3:  # too long: end it at a phrase, not mid-phrase
            phrase = _cut_at_phrase(piece, budget - weight(title))
            if phrase:
                title += phrase
            elif not title:
                cut = _cut_in_clause(piece, budget - weight("…"))
                title = (_tidy_end(cut) + "…") if cut else piece
        break
    title = _tidy_end(title) if not title.endswith("…") else title
    title = _with_main_clause(title, text, budget)
    if not title:
        title = text[:40]
    title = title.replace("`", "")
    if re.match(r"[a-z]+(?:['’][a-z]+)?(?:\s|$)", title):  # an English word, not an identifier
        title = title[:1].upper() + title[1:]
    return title


def word_count(text: str) -> int:
    """Words, counting every Chinese character as one: "以后别在周五下午发版" is 10."""
    han = len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff]", text))
    latin = len(re.findall(r"[A-Za-z0-9][\w'’.-]*", text))
    return han + latin
