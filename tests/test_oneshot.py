"""The one-shot recall process (`alaya recall --json` without a server) does only what the answer
needs: the shortcuts it takes give exactly what the long way gave — query cues checked only
when a word they need is present, words and CJK runs found without compiling a class of
40,000 code points, the build's arrays read without np.load, every candidate's kind,
superseded flag and speakers read from arrays instead of its JSON row, alaya.toml's parse
taken from the build while its text is unchanged, rjieba's dictionary loaded once, records
instead of dataclasses compiling their methods at import — and it starts no pool of BLAS
threads, and leaves without tearing the interpreter down once its answer is out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine import artifacts as A
from vault_engine.config import CONFIG_FILE, load_config, toml_snapshot
from vault_engine.providers.embedding import HashEmbedder
from vault_engine.recall import index as recall_index
from vault_engine.recall.npy import load_npy
from vault_engine.recall.pipeline import recall
from vault_engine.recall.query import RecallQuery
from vault_engine.sessions.distill import distill
from vault_engine.sessions.ingest import ingest
from vault_engine.store import relations
from vault_engine.store.vault import Vault
from vault_engine.text import tokens

HASH = HashEmbedder(128)
DAY = 86_400_000
T0 = 1_775_000_000_000  # 2026-03-31T23:33:20Z


def _session(sid: str, day: int, turns: list[tuple[str, str]]) -> tuple[str, bytes]:
    ms = T0 + day * DAY
    return f"{sid}.json", json.dumps({
        "id": sid, "timestamp": ms, "channel": "chat",
        "turns": [{"id": f"m{i}", "role": "user", "name": who, "content": text,
                   "timestamp": ms + i * 1000} for i, (who, text) in enumerate(turns)]}).encode()


def _card(root: Path, name: str, body: str, **fm: object) -> None:
    lines = [f"{k}: {json.dumps(v)}" for k, v in fm.items()]
    path = root / "cards" / "fact" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body + "\n", encoding="utf-8")


@pytest.fixture
def built(vault_path: Path) -> Path:
    """Sessions with different people in them (Jon speaks only in one), cards distilled from
    them, entity pages, a card every claim of which was superseded, another agent's card."""
    ingest(Vault.open(vault_path), [
        _session("chat-a", 0, [("Melanie", "I signed up for a pottery class yesterday."),
                               ("Caroline", "Wow, so cool! Is the pottery class hard?"),
                               ("Melanie", "Pottery helps me relax after work.")]),
        _session("chat-b", 7, [("Melanie", "We went camping in the mountains last weekend."),
                               ("Jon", "Did the kids like the camping trip?"),
                               ("Melanie", "The kids loved the campfire stories.")]),
        _session("chat-c", 9, [("Caroline", "Jon said the camping gear is broken."),
                               ("Melanie", "I decided we buy a new tent for camping.")]),
        _session("zh-a", 1, [("李娜", "连接池昨天又满了，支付服务一直超时。"),
                             ("王强", "我上周六把连接池的上限调到了 80。")]),
        _session("zh-b", 3, [("李娜", "支付服务今天恢复了，连接池稳定在 40 左右。"),
                             ("王强", "好的")]),
    ])
    distill(Vault.open(vault_path), distiller="rules")
    _card(vault_path, "Old fee", "", id="card-old-fee", title="Old checkout fee",
          claims=[{"id": "c1", "text": "The checkout fee is 2 euros", "status": "superseded"}])
    _card(vault_path, "New fee", "The checkout fee is now 3 euros.", id="card-new-fee",
          title="New checkout fee")
    _card(vault_path, "Private plan", "Camping plans of agent bob.", id="card-private",
          title="Private plan", namespace="bob-main")
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HASH))
    return vault_path

# what re's (?i) reads as an ASCII letter (ſ, K, İ, ı) and words the cues need
_CUE_WORDS = ["why", "cause", "caused", "because", "reason", "root", "due to", "led to", "then",
              "after", "next", "later", "before", "when", "timeline", "sequence", "depends",
              "required", "need", "prerequisite", "similar", "like", "same as", "alternative",
              "conflicts", "contradict", "disagree", "versus", "vs", "replaced", "superseded",
              "instead", "deprecated", "为什么", "原因", "之后", "然后", "依赖", "需要", "类似",
              "矛盾", "冲突", "替代", "İnstead", "ınstead", "becauſe", "liKe", "WHY", "gateway"]


_CURRENT_WORDS = ["currently", "current", "now", "latest", "these days", "at the moment",
                  "as of today", "NOW", "Currently", "theſe  days", "laTeſt", "knowledge",
                  "nowhere", "现在", "目前", "当前", "如今", "最新", "眼下", "today", "moment"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CURRENT_WORDS + _CUE_WORDS) | st.text(max_size=6),
                max_size=5), st.sampled_from([" ", "", "-", "的"]))
def test_current_questions_skipped_by_their_words_are_the_ones_the_pattern_finds(
        words: list[str], sep: str) -> None:
    from vault_engine.recall import ranking

    text = sep.join(words)
    assert ranking.wants_current(text) == bool(re.search(ranking._CURRENT, text))


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


def test_every_array_of_a_build_reads_as_np_load_reads_it(built: Path) -> None:
    build = A.current_build(built / ".alaya")
    assert build is not None
    files = sorted(build.root.rglob("*.npy"))
    assert len(files) > 30
    for path in files:
        for mapped in (True, False):
            ours, theirs = load_npy(path, mmap=mapped), np.load(path, mmap_mode="r" if mapped
                                                                  else None)
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, path
            assert np.array_equal(np.asarray(ours), np.asarray(theirs)), path
            assert not mapped or not ours.flags.writeable


def test_arrays_numpy_writes_otherwise_are_left_to_np_load(tmp_path: Path) -> None:
    cases = {"fortran": np.asfortranarray(np.arange(12.0).reshape(3, 4)),
             "structured": np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]),
             "big-endian": np.arange(5, dtype=">i4"), "empty": np.zeros((0, 3), np.float32),
             "scalar": np.array(7, dtype=np.int64), "bool": np.array([True, False])}
    for name, arr in cases.items():
        np.save(tmp_path / f"{name}.npy", arr)
        for mapped in (True, False):
            got = load_npy(tmp_path / f"{name}.npy", mmap=mapped)
            assert got.dtype == arr.dtype and np.array_equal(np.asarray(got), arr), name
    np.save(tmp_path / "cut.npy", np.arange(100))
    with (tmp_path / "cut.npy").open("r+b") as fh:
        fh.truncate(200)
    for mapped in (True, False):  # a truncated file: np.load says what is wrong
        with pytest.raises(ValueError):
            load_npy(tmp_path / "cut.npy", mmap=mapped)


QUERIES = [
    RecallQuery(text="What did Jon say about the camping trip?"),  # names who spoke in one
    RecallQuery(text="Did the kids like camping?", kinds=("session",)),
    RecallQuery(text="When did Melanie sign up for the pottery class?"),
    RecallQuery(text="Melanie pottery", depth=2, top_k=20),
    RecallQuery(text="What is the checkout fee currently?"),  # a superseded card
    RecallQuery(text="checkout fee", mode="bm25"),
    RecallQuery(text="连接池 超时 支付服务"),
    RecallQuery(text="camping", types=("decision",)),
    RecallQuery(text="camping tent", relations=("EXTRACTED_FROM",), depth=2),
    RecallQuery(text="camping plans", all_namespaces=True),
]
NEW_ARRAYS = ("node_kind.npy", "unit_superseded.npy", "node_speakers.npy",
              "node_speakers_indptr.npy")


def _answers(state: Path) -> tuple[list[dict[str, object]], int]:
    """Each query's answer from a freshly opened index, and how many unit rows they decoded."""
    out, rows = [], 0
    for q in QUERIES:
        recall_index._INDEX_CACHE.clear()
        result = recall(state, q, embedder=HASH, telemetry=False)
        result.pop("latency_ms")
        out.append(result)
        rows += len(next(iter(recall_index._INDEX_CACHE.values()))._rows)
    return out, rows


def test_kinds_flags_and_speakers_from_arrays_answer_as_the_rows_did(built: Path) -> None:
    state = built / ".alaya"
    build = A.current_build(state)
    assert build is not None
    speakers = json.loads((build.path(A.RECALL) / "info.json").read_text("utf-8"))["speakers"]
    assert {"caroline", "jon", "melanie", "李娜"} <= set(speakers)
    fast, fast_rows = _answers(state)
    fast_named = _named_jon(state)
    assert fast_named and any(n["kind"] == "session" for n in fast[0]["nodes"])  # type: ignore[attr-defined]
    for name in NEW_ARRAYS:  # a build of format 14: the same answers from the rows
        (build.path(A.RECALL) / name).unlink()
    slow, slow_rows = _answers(state)
    assert fast == slow and _named_jon(state) == fast_named
    assert fast_rows < slow_rows


def _named_jon(state: Path) -> set[int]:
    """The sessions Jon spoke in, of all sessions, for a question that names him."""
    from vault_engine.recall.fusion import _named_speakers

    recall_index._INDEX_CACHE.clear()
    index = recall_index.open_index(state)
    by_node = {n: [(int(index.node_unit[n]), 1.0)] for n in range(index.n_nodes)
               if index.node_kind(n) == "session"}
    named = _named_speakers(index, by_node, QUERIES[0].text)
    assert len(named) < len(by_node)
    return named


def test_a_one_shot_recall_runs_numpy_blas_on_one_thread(built: Path) -> None:
    """The BLAS thread count is read when numpy loads: the direct path sets it first."""
    script = (
        "import json, os, sys; from cli.fast import run_direct; "
        "assert 'numpy' not in sys.modules; "
        f"out = run_direct(['--vault', {str(built)!r}, 'recall', 'camping', '--json']); "
        "print(json.dumps({'answered': out is not None and out[0] == 0, "
        "'blas': os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy': 'numpy' in sys.modules, "
        "'click': 'click' in sys.modules, "
        "'bm25s': 'bm25s' in sys.modules, 'tomllib': 'tomllib' in sys.modules}))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "ALAYA_EMBED_PROVIDER")}  # the bundled model
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, env=env, check=True)
    assert json.loads(result.stdout) == {"answered": True, "blas": "1", "numpy": True,
                                         "click": False, "bm25s": False,
                                         "tomllib": False}


def test_the_build_keeps_alaya_toml_parsed_for_as_long_as_its_text_is_unchanged(
        built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build = A.current_build(built / ".alaya")
    assert build is not None
    snapshot = build.config_snapshot()
    assert snapshot is not None and snapshot == toml_snapshot(built)
    assert load_config(built, snapshot=snapshot) == load_config(built)
    monkeypatch.setenv("ALAYA_AGENT", "ops-bot")
    assert load_config(built, snapshot=snapshot) == load_config(built)
    toml = built / CONFIG_FILE
    toml.write_text(toml.read_text("utf-8").replace("top_k = 10", "top_k = 7", 1),
                    encoding="utf-8")
    changed = load_config(built, snapshot=snapshot)  # another text: parsed again
    assert changed == load_config(built) and changed.get("recall", "top_k") == 7
    toml.write_text('[vault]\ncreated = 2026-01-01T00:00:00Z\n', encoding="utf-8")
    assert toml_snapshot(built) is None  # a TOML date: JSON would not keep it


def test_chinese_words_come_from_rjiebas_own_segmenter_as_from_a_new_one() -> None:
    """Importing rjieba builds its default segmenter; using it (not a second Jieba()) loads
    the dictionary once, and cuts, tags and knows words as a new segmenter would."""
    import rjieba

    from vault_engine.text import words

    fresh = rjieba.Jieba()
    for word in words._EXTRA_WORDS:
        fresh.add_word(word, 200000, None)
    ours = words._segmenter()
    assert ours is rjieba
    for text in ("网关重启以后通知发不出去", "连接池昨天又满了支付服务一直超时", "以后都要先灰度再发版",
                 "王强上周六把连接池的上限调到了", "李娜说根因是慢查询", "问题出在联合索引没生效"):
        assert ours.cut(text, True) == fresh.cut(text, True)
        assert ours.tag(text, True) == fresh.tag(text, True)
        assert [ours.has_word(text[:n]) for n in (2, 3)] == [fresh.has_word(text[:n])
                                                            for n in (2, 3)]


def _pair(frozen: bool) -> tuple[type, type]:
    """The same class as a dataclass and as a record."""
    import dataclasses

    from vault_engine.primitives import record

    made = []
    for decorate in (dataclasses.dataclass(frozen=frozen), record(frozen=frozen)):
        class C:
            """A class."""

            a: int
            b: str = "x"
            c: tuple[str, ...] = ()
            d: list[int] = dataclasses.field(default_factory=list)
            e: float | None = dataclasses.field(default=None, compare=False, repr=False)

            @property
            def twice(self) -> int:
                return self.a * 2

        made.append(decorate(C))
    return made[0], made[1]


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_behaves_as_the_dataclass_it_replaces(frozen: bool) -> None:
    import copy
    import dataclasses

    dc, rec = _pair(frozen)
    for args, kwargs in [((1,), {}), ((1, "y"), {"d": [2]}), ((), {"a": 3, "e": 0.5}),
                         ((4, "z", ("p",), [1], 2.0), {})]:
        x, y = dc(*args, **kwargs), rec(*args, **kwargs)
        assert dataclasses.asdict(x) == dataclasses.asdict(y)
        assert dataclasses.astuple(x) == dataclasses.astuple(y)
        assert repr(x) == repr(y) and y.twice == x.twice
        assert y == rec(*args, **kwargs) and y != rec(99) and y != x and (y == 1) is False
        assert dataclasses.replace(y, b="w") == rec(y.a, "w", y.c, y.d, y.e)
        assert copy.deepcopy(y) == y
        assert _outcome(lambda v=x: hash(v)) == _outcome(lambda v=y: hash(v))
        if frozen:
            with pytest.raises(dataclasses.FrozenInstanceError):
                y.a = 5  # type: ignore[misc]
            with pytest.raises(dataclasses.FrozenInstanceError):
                del y.b
        else:
            y.a = 5
            assert y.a == 5
    # hashable field values: the same hash (frozen) or the same refusal (not frozen)
    assert _outcome(lambda: hash(rec(1, "x", ("t",), (), 0.1))) == _outcome(
        lambda: hash(dc(1, "x", ("t",), (), 0.1)))
    assert rec(1).d is not rec(1).d  # a fresh default each time
    assert [f.name for f in dataclasses.fields(rec)] == [f.name for f in dataclasses.fields(dc)]
    assert dataclasses.is_dataclass(rec) and rec.__match_args__ == dc.__match_args__
    for args, kwargs in [((), {}), ((1,), {"a": 2}), ((1,), {"z": 2}), ((1, 2, 3, 4, 5, 6), {}),
                         ((), {"b": "q"}), ((1, 2, 3, 4, 5, 6), {"z": 1})]:
        with pytest.raises(TypeError) as want:
            dc(*args, **kwargs)
        with pytest.raises(TypeError) as got:
            rec(*args, **kwargs)
        assert str(got.value) == str(want.value)


def _outcome(call: object) -> object:
    try:
        return ("value", call())  # type: ignore[operator]
    except Exception as exc:  # noqa: BLE001 — the exception is the outcome compared
        return ("raised", type(exc), str(exc))


def test_a_record_refuses_what_it_does_not_do() -> None:
    import dataclasses

    from vault_engine.primitives import record

    with pytest.raises(TypeError, match="plain fields only"):
        @record
        class Post:
            a: int = 0

            def __post_init__(self) -> None: ...
    with pytest.raises(TypeError, match="plain fields only"):
        @record
        class Hidden:
            a: int = dataclasses.field(default=0, init=False)


def test_the_alaya_command_exits_with_its_whole_answer_written(built: Path) -> None:
    """The one-shot path leaves with os._exit once its answer is flushed: the answer is
    whole, the exit code kept, the telemetry line written."""
    alaya = str(Path(sys.executable).parent / "alaya")
    env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash128")
    telemetry = built / ".alaya" / A.TELEMETRY
    before = telemetry.read_text("utf-8").count("\n") if telemetry.exists() else 0
    done = subprocess.run([alaya, "--vault", str(built), "recall", "camping kids", "--json",
                           "--top-k", "25"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stderr == ""
    answer = json.loads(done.stdout)
    assert answer["nodes"] and done.stdout.endswith("}\n")
    assert telemetry.read_text("utf-8").count("\n") == before + 1
    bad = subprocess.run([alaya, "--vault", str(built), "recall", "--json", "--depth", "0"],
                         capture_output=True, text=True, env=env)  # nothing asked: the full CLI
    assert bad.returncode == 2 and "nothing to recall" in bad.stdout + bad.stderr


def test_without_a_server_the_discovery_checks_are_not_even_imported(tmp_path: Path) -> None:
    """A one-shot recall with no `.alaya/serve.json` pays nothing for the server's checks."""
    script = ("import sys; from cli.fast import try_server; "
              f"out = try_server(['--vault', {str(tmp_path)!r}, 'recall', 'x', '--json']); "
              "print(out, 'compilers.discovery' in sys.modules, '_blake2' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent.parent, check=True)
    assert result.stdout.split() == ["None", "False", "False"]
