"""The machine's word table (`text.wordtable`): a short Chinese run cut from it is cut exactly
as rjieba's full dictionary cuts it, a one-shot Chinese recall answers as before without
building the dictionary, and a missing, truncated or unwritable table costs only speed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vault_engine.text import words, wordtable

ROOT = Path(__file__).resolve().parent.parent
_HAN = re.compile(words._HAN)

# runs the benchmark sets do not have: extra words, rare characters, names, repetition
_EDGE_RUNS = [
    "网关重启以后通知发不出去", "以后都要先灰度再发版", "问题出在联合索引没生效", "李娜说根因是慢查询",
    "㐀㐁㐂", "的的的的的", "中华人民共和国国务院", "王强上周六把连接池的上限调到了", "发版发版回滚",
    "嗯", "一", "欧阳娜娜和司马光去了乌鲁木齐", "这个蚂蚁金服的年假制度", "值班二线主值班换班调休",
]


def _table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> wordtable.WordTable:
    monkeypatch.setenv("ALAYA_CACHE_DIR", str(tmp_path / "cache"))
    assert wordtable.build_table(words._segmenter(), words._EXTRA_WORDS, words._EXTRA_FREQ)
    table = wordtable.open_table(words._EXTRA_WORDS)
    assert table is not None
    return table


def _corpus_runs() -> list[str]:
    runs: set[str] = set(_EDGE_RUNS)
    for path in sorted((ROOT / "benchmarks" / "zh").rglob("*")):
        if path.is_file() and path.suffix in (".md", ".json", ".yaml", ".jsonl"):
            for m in _HAN.finditer(path.read_text("utf-8", errors="replace")):
                if len(m.group(0)) <= words._TABLE_LONGEST:
                    runs.add(m.group(0))
    return sorted(runs)


def test_every_chinese_run_of_the_benchmark_sets_is_cut_as_the_full_dictionary_cuts_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path, monkeypatch)
    runs = _corpus_runs()
    assert len(runs) > 3000  # the four Chinese sets and the edge runs
    full = words._segmenter()
    differ = [r for r in runs if table.cut(r) != list(full.cut(r, True))]
    assert differ == []


def test_the_table_is_built_once_and_read_without_the_dictionary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = _table(tmp_path, monkeypatch)
    files = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert [Path(f).suffix for f in files] == [".bin", ".json"]
    info = json.loads((tmp_path / "cache" / files[1]).read_text("utf-8"))
    assert info["words"] > 300_000 and info["longest"] == table.longest == 16
    stamp = (tmp_path / "cache" / files[0]).stat().st_mtime_ns
    assert wordtable.build_table(words._segmenter(), words._EXTRA_WORDS, words._EXTRA_FREQ)
    assert (tmp_path / "cache" / files[0]).stat().st_mtime_ns == stamp  # not written again
    # a process that never loads the dictionary: no `rjieba` package, the same words
    script = ("import sys; from vault_engine.text.words import han_words; "
              "print(han_words('连接池昨天又满了') + han_words('以后都要先灰度再发版'), "
              "'rjieba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, check=True, env=dict(os.environ)).stdout
    full = words._segmenter()
    expected = [w for r in ("连接池昨天又满了", "以后都要先灰度再发版") for w in full.cut(r, True)]
    assert out.strip() == f"{expected} False"


def test_a_broken_or_missing_table_falls_back_to_the_dictionary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _table(tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    data = next(cache.glob("*.bin"))
    meta = next(cache.glob("*.json"))
    script = ("import sys; from vault_engine.text.words import han_words; "
              "print(han_words('网关重启以后通知发不出去'), 'rjieba' in sys.modules)")
    expected = str(list(words._segmenter().cut("网关重启以后通知发不出去", True)))

    def run() -> str:
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              cwd=ROOT, check=True, env=dict(os.environ)).stdout.strip()

    assert run() == f"{expected} False"
    data.write_bytes(data.read_bytes()[:1000])  # cut short: not read, the dictionary is …
    assert run() == f"{expected} True"
    assert run() == f"{expected} False"  # … and the process that loaded it wrote it again
    data.unlink()
    meta.write_text("{not json", encoding="utf-8")
    wordtable._open.cache_clear()  # a process keeps the table it read; a new one reads again
    assert wordtable.open_table(words._EXTRA_WORDS) is None
    assert run() == f"{expected} True"
    assert run() == f"{expected} False"


def test_an_unwritable_cache_means_no_table_and_the_same_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("ALAYA_CACHE_DIR", str(blocked / "cache"))
    assert not wordtable.build_table(words._segmenter(), words._EXTRA_WORDS, words._EXTRA_FREQ)
    assert wordtable.open_table(words._EXTRA_WORDS) is None
    assert blocked.read_text("utf-8").startswith("a file")


def test_a_dictionary_rjieba_does_not_embed_gives_no_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dict.txt must be rjieba's own dictionary: a sample of it is checked against rjieba."""
    monkeypatch.setenv("ALAYA_CACHE_DIR", str(tmp_path / "cache"))
    other = tmp_path / "dict.txt"
    other.write_text("".join(f"词{i}语{i} 3 n\n" for i in range(5000)), encoding="utf-8")
    monkeypatch.setattr(wordtable, "_dict_txt", lambda: other)
    assert not wordtable.build_table(words._segmenter(), words._EXTRA_WORDS, words._EXTRA_FREQ)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_process_that_cuts_many_runs_loads_the_dictionary_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _table(tmp_path, monkeypatch)
    runs = [r for r in _corpus_runs() if len(r) > 1][: words._TABLE_RUNS + 20]
    script = ("import json, sys; from vault_engine.text import words; "
              f"runs = {runs!r}; seen = []; out = []\n"
              "for r in runs:\n"
              "    out.append(words.han_words(r)); seen.append('rjieba' in sys.modules)\n"
              "print(json.dumps([out, seen.index(True)]))")
    out, first = json.loads(subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True,
        env=dict(os.environ)).stdout)
    assert first == words._TABLE_RUNS  # the 65th new run loads the dictionary
    full = words._segmenter()
    assert out == [[w for w in full.cut(r, True) if w.strip()] for r in runs]


def test_a_one_shot_chinese_recall_answers_as_before_without_the_dictionary(
        vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from compilers.options import CompileOptions
    from compilers.pipeline import compile_vault
    from vault_engine.providers.embedding import HashEmbedder
    from vault_engine.sessions.ingest import ingest
    from vault_engine.store.vault import Vault

    ingest(Vault.open(vault_path), [("zh.json", json.dumps({
        "id": "zh", "timestamp": 1_775_000_000_000, "channel": "chat",
        "turns": [{"id": f"m{i}", "role": "user", "name": who, "content": text,
                   "timestamp": 1_775_000_000_000 + i}
                  for i, (who, text) in enumerate([
                      ("李娜", "连接池昨天又满了，支付服务一直超时。"),
                      ("王强", "我上周六把连接池的上限调到了 80。"),
                      ("李娜", "网关重启以后通知发不出去，要先灰度再发版。")])]}).encode())])
    compile_vault(Vault.open(vault_path), CompileOptions(embedder=HashEmbedder(128)))
    _table(tmp_path, monkeypatch)
    alaya = str(Path(sys.executable).parent / "alaya")
    probe = ("import sys, runpy; sys.argv = ['alaya'] + sys.argv[1:]; "
             "import os; from cli import fast; real = os._exit\n"
             "def leave(code):\n"
             "    sys.stderr.write('rjieba loaded: %s' % ('rjieba' in sys.modules)); "
             "sys.stderr.flush(); real(code)\n"
             "os._exit = leave; fast.main()")
    (tmp_path / "file").write_text("no cache folder can be made under a file", "utf-8")
    answers = {}
    for cache in (tmp_path / "cache", tmp_path / "file" / "none"):
        env = dict(os.environ, ALAYA_EMBED_PROVIDER="hash128", ALAYA_CACHE_DIR=str(cache))
        for query in ("连接池 超时", "网关重启以后通知怎么了"):
            done = subprocess.run([sys.executable, "-c", probe, "--vault", str(vault_path),
                                   "recall", query, "--json"], capture_output=True, text=True,
                                  env=env, cwd=ROOT)
            assert done.returncode == 0, done.stderr
            answer = json.loads(done.stdout)
            answer.pop("latency_ms")
            answers[(cache.name, query)] = (answer, done.stderr.strip())
        cli = subprocess.run([alaya, "--vault", str(vault_path), "recall", "连接池 超时",
                              "--json"], capture_output=True, text=True, env=env)
        assert cli.returncode == 0 and json.loads(cli.stdout)["nodes"]
    for query in ("连接池 超时", "网关重启以后通知怎么了"):
        with_table, without = answers[("cache", query)], answers[("none", query)]
        assert with_table[0]["nodes"] and with_table[0] == without[0]
        assert with_table[1] == "rjieba loaded: False" and without[1] == "rjieba loaded: True"


def test_a_write_killed_midway_leaves_nothing_read_and_its_litter_is_cleared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer killed before its rename leaves a temp file that nothing reads; the next
    writer removes one older than any live write and leaves a fresh one (a write under way)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALAYA_CACHE_DIR", str(cache))
    script = ("import os, sys; from vault_engine.text import words, wordtable\n"
              "real = os.replace\n"
              "def killed(src, dst):\n"
              "    os.kill(os.getpid(), 9)\n"
              "os.replace = killed\n"
              "words._segmenter()")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=dict(os.environ),
                          capture_output=True)
    assert done.returncode == -9
    litter = sorted(cache.glob("jieba-*.tmp"))
    assert litter and not list(cache.glob("*.bin")) and not list(cache.glob("*.json"))
    assert wordtable.open_table(words._EXTRA_WORDS) is None
    for tmp in litter:
        os.utime(tmp, (1_000_000_000, 1_000_000_000))  # long ago
    fresh = cache / "jieba-0000000000000000.bin.99999.tmp"
    fresh.write_bytes(b"a write under way")
    wordtable._open.cache_clear()
    table = _table(tmp_path, monkeypatch)
    assert table.cut("连接池昨天又满了") == list(words._segmenter().cut("连接池昨天又满了", True))
    assert sorted(cache.glob("jieba-*.tmp")) == [fresh]
