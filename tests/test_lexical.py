"""The query-time BM25 reader gives bm25s's own scores, and the tokenizer's stopwords are
bm25s's list, without importing the bm25s package on the recall path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import bm25s
import numpy as np

from vault_engine.recall.bm25 import SavedBM25, save_vocab_hashes
from vault_engine.text.tokens import (
    BM25S_STOPWORDS_EN_PLUS,
    EXTRA_STOPWORDS,
    _stopwords,
    tokenize,
)

DOCS = ["the gateway restarted after the telegram notice",
        "postgres replication lag caused stale checkout prices",
        "the backup lock made the migration fail",
        "redis streams need an explicit ACK or messages are redelivered",
        "gateway restart notice sent to telegram twice"]


def test_saved_index_scores_equal_bm25s(tmp_path: Path) -> None:
    tokens = [tokenize(d) for d in DOCS]
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    retriever.save(str(tmp_path / "idx"))
    loaded = bm25s.BM25.load(str(tmp_path / "idx"), mmap=True)
    ours = SavedBM25(str(tmp_path / "idx"))
    assert ours.vocab_dict == loaded.vocab_dict
    for query in ("gateway telegram", "replication lag checkout", "ack redis", "lock"):
        ids = [ours.vocab_dict[t] for t in tokenize(query) if t in ours.vocab_dict]
        assert ids
        np.testing.assert_allclose(ours.get_scores(ids), loaded.get_scores(ids), rtol=1e-6)
    assert not ours.get_scores([]).any()
    # the hashed vocabulary (what the compiler writes) finds the same ids as the JSON one
    save_vocab_hashes(str(tmp_path / "idx"), loaded.vocab_dict)
    hashed = SavedBM25(str(tmp_path / "idx"))
    words = ["gateway", "telegram", "nonexistentword", "ack", "lock", "restart"]
    tokens = [t for w in words for t in tokenize(w)]
    assert hashed.ids_for(tokens) == ours.ids_for(tokens) == [
        loaded.vocab_dict[t] for t in tokens if t in loaded.vocab_dict]
    assert hashed._vocab is None  # answered without reading the vocabulary JSON


def test_stopwords_are_bm25s_list_and_loading_them_skips_the_package() -> None:
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    assert set(STOPWORDS_EN_PLUS) == BM25S_STOPWORDS_EN_PLUS  # written out, the same list
    assert _stopwords() == BM25S_STOPWORDS_EN_PLUS | EXTRA_STOPWORDS
    code = ("import sys; from vault_engine.text.tokens import tokenize; "
            "print(tokenize('What is the gateway doing?'), 'bm25s' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout
    assert out.strip() == "['gateway'] False"


def two_packed_shards(tmp_path: Path) -> Path:
    """DOCS in two bm25s shards (units 0–1 and 2–4), built and packed as the compiler does."""
    from compilers.lexical import build_lexical
    from vault_engine.recall.bm25 import pack_shards

    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(t, len(vocab)) for t in tokenize(d)] for d in DOCS]
    folder = tmp_path / "lexical"
    for k, part in enumerate((docs[:2], docs[2:])):
        build_lexical(folder / f"shard-{k:02d}", part, vocab)
        np.save(folder / f"shard-{k:02d}" / "units.npy",
                np.arange(len(part), dtype=np.int64) + (0 if k == 0 else 2))
    pack_shards(str(folder))
    return folder


def test_packed_shards_answer_like_the_shards(tmp_path: Path) -> None:
    from vault_engine.recall.bm25 import open_pack

    folder = two_packed_shards(tmp_path)
    packed = open_pack(str(folder))
    assert packed is not None and len(packed) == 2
    for (view, units), k in zip(packed, (0, 1), strict=True):
        shard = SavedBM25(str(folder / f"shard-{k:02d}"))
        assert list(units) == list(np.load(folder / f"shard-{k:02d}" / "units.npy"))
        for query in ("gateway telegram", "lock migration", "redis ack"):
            toks = tokenize(query)
            assert view.ids_for(toks) == shard.ids_for(toks)
            np.testing.assert_allclose(view.get_scores(view.ids_for(toks)),
                                       shard.get_scores(shard.ids_for(toks)))


def test_pack_doc_freq_sums_the_shards(tmp_path: Path) -> None:
    from vault_engine.recall.bm25 import open_doc_freq, token_hash

    folder = two_packed_shards(tmp_path)
    df = open_doc_freq(str(folder))
    assert df is not None and len(df) == 1  # shards that name no namespace: one count
    namespace, hashes, counts = df[0]
    assert namespace is None
    for token in ("gateway", "telegram", "lock", "redi"):
        expected = sum(token in tokenize(d) for d in DOCS)
        i = int(np.searchsorted(hashes, np.uint64(token_hash(token))))
        assert int(counts[i]) == expected, token
