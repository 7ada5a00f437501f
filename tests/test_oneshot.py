"""The one-shot recall process (`alaya recall --json` without a server) does only what the answer
needs: the shortcuts it takes give exactly what the long way gave — query cues checked only
when a word they need is present."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.store import relations

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
