"""Prefix-filtered pair search finds exactly the pairs a brute-force Jaccard scan finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine.care.detection import _jaccard, similar_pairs

WORDS = st.sampled_from([f"w{i}" for i in range(12)])


@settings(max_examples=200, deadline=None)
@given(sets=st.lists(st.frozensets(WORDS, max_size=8), max_size=25),
       threshold=st.sampled_from([0.5, 0.6, 0.8, 1.0]))
def test_similar_pairs_equals_brute_force(sets: list[frozenset[str]], threshold: float) -> None:
    brute = sorted((i, j, _jaccard(sets[i], sets[j])) for i in range(len(sets))
                   for j in range(i + 1, len(sets))
                   if sets[i] and sets[j] and _jaccard(sets[i], sets[j]) >= threshold)
    assert similar_pairs(sets, threshold) == brute
