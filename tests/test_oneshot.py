"""The one-shot recall process (`alaya recall --json` without a server) does only what the answer
needs: the shortcuts it takes give exactly what the long way gave — query cues checked only
when a word they need is present, words and CJK runs found without compiling a class of
40,000 code points."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.store import relations
from vault_engine.text import tokens

# what re's (?i) reads as an ASCII letter (ſ, K, İ, ı) and words the cues need
_CUE_WORDS = ["why", "cause", "caused", "because", "reason", "root", "due to", "led to", "then",
              "after", "next", "later", "before", "when", "timeline", "sequence", "depends",
              "required", "need", "prerequisite", "similar", "like", "same as", "alternative",
              "conflicts", "contradict", "disagree", "versus", "vs", "replaced", "superseded",
              "instead", "deprecated", "为什么", "原因", "之后", "然后", "依赖", "需要", "类似",
              "矛盾", "冲突", "替代", "İnstead", "ınstead", "becauſe", "liKe", "WHY", "gateway"]


def _all_cues(text: str) -> list[str]:
    return [rel for pattern, rel, _ in relations._QUERY_CUES if re.search(pattern, text)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CUE_WORDS) | st.text(max_size=6), max_size=5),
       st.sampled_from([" ", "", "-", "的"]))
def test_query_cues_skipped_by_their_words_find_what_every_pattern_finds(
        words: list[str], sep: str) -> None:
    text = sep.join(words)
    assert relations.query_relations(text) == _all_cues(text)


# the tokenizer's regex before: a CJK run, else a word with one inner apostrophe
_CJK_RE = ("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+"
           "|[^\\W_]+(?:['’][^\\W_]+)?")
# characters at and around the edges of the CJK ranges, CJK characters that are not word
# characters (・ ゠ ゛, unassigned ones), apostrophes, underscores, marks, other scripts
_ALPHABET = ("abcXYZ019_'’ -.,!?\t\né\u0301ßİı٣😀，。"
             "\u303f\u3040\u3041\u3097\u3099\u309b\u30a0\u30a1\u30fb\u30fc\u30ff\u3100"
             "\u33ff\u3400\u4dbf\u4dc0\u4dff\u4e00网关\u9fff\ua000\uf8ff\uf900\ufa6e\ufada"
             "\ufaff\ufb00\uabff\uac00한\ud7a3\ud7a4\ud7af\ud7b0")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=24))
def test_words_and_cjk_runs_are_what_the_regex_found(text: str) -> None:
    assert tokens._words(text) == re.findall(_CJK_RE, text)


def test_every_cjk_character_is_read_as_the_regex_read_it() -> None:
    # a run inside a word ends it; the scan goes on after the run, not after the word
    for text in ("中'ab'cd", "ab中cd", "中ab'中cd", "中・文", "网关restart重启", "k8s集群"):
        assert tokens._words(text) == re.findall(_CJK_RE, text)
    for lo, hi in ((0x3000, 0x3200), (0x3300, 0x4f00), (0x9f00, 0xa100), (0xab00, 0xd800),
                   (0xf800, 0xfb10)):
        for cp in range(lo, hi):
            ch = chr(cp)
            assert tokens._is_cjk(ch) == any(a <= cp <= b for a, b in tokens._CJK_RANGES)
            for text in (ch, f"a{ch}b", f"{ch}a'{ch}", f"'{ch}{ch}x", f"{ch}・{ch}"):
                assert tokens._words(text) == re.findall(_CJK_RE, text), hex(cp)
