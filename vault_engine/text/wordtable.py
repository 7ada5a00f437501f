"""jieba's word frequencies as a table a process opens in a millisecond.

rjieba builds its whole dictionary (349,000 words) in ~0.1 s, the largest single cost of a
one-shot Chinese `alaya recall`. Cutting a short run needs far less: jieba's route over a run
only ever asks the frequency of the run's own substrings (at most 16 characters long) and
the dictionary's total. So a run can be cut by an empty rjieba segmenter given just those
words and their frequencies, plus one placeholder word that brings its total to the full
dictionary's: the same DAG, the same route, the same HMM for unknown characters — the same
words, which tests/test_words_table.py checks against the full segmenter on every Chinese
run of the benchmark sets.

The table: the 64-bit BLAKE2b hash of every word, sorted, then each word's frequency in the
same order (little-endian uint64s, then uint32s), read whole (4 MB, ~1 ms; a mapping of a
file cut short would kill the process); a JSON sidecar holds the count, the dictionary's
total and the longest word. Built
from the `jieba` package's dict.txt (the dictionary rjieba embeds; the build checks a sample
of it against rjieba's own dictionary and writes nothing if they differ) with `_EXTRA_WORDS`
applied, once per machine, by the first process that loads the full segmenter anyway; kept
in `$ALAYA_CACHE_DIR`, else `$XDG_CACHE_HOME/alaya`, else `~/.cache/alaya`. With no table (a
cache that cannot be written, no jieba package), every cut uses the full segmenter, as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

_PLACEHOLDER = "\ue000"  # a private-use character: never inside a run of Han characters
_FORMAT = 1


def _hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


def cache_dir() -> Path:
    env = os.environ.get("ALAYA_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "alaya" if xdg else Path.home() / ".cache" / "alaya"


def _dict_txt() -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("jieba")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "dict.txt"
    return path if path.is_file() else None


def _key(dict_txt: Path, extra: tuple[str, ...]) -> str:
    st = dict_txt.stat()
    seed = f"{_FORMAT}|{st.st_size}|{st.st_mtime_ns}|{'|'.join(extra)}"
    return hashlib.blake2b(seed.encode("utf-8"), digest_size=8).hexdigest()


def _paths(extra: tuple[str, ...]) -> tuple[Path, Path] | None:
    dict_txt = _dict_txt()
    if dict_txt is None:
        return None
    stem = cache_dir() / f"jieba-{_key(dict_txt, extra)}"
    return stem.with_suffix(".bin"), stem.with_suffix(".json")


class WordTable:
    """The frequencies of jieba's words by hash: enough to cut a run as the full dictionary."""

    def __init__(self, hashes: Any, freqs: Any, total: int, longest: int) -> None:
        self._hashes = hashes
        self._freqs = freqs
        self.total = total
        self.longest = longest

    def cut(self, run: str) -> list[str]:
        """`run` cut as rjieba's full segmenter (with the extra words) cuts it, HMM on."""
        import numpy as np

        subs = list({run[i:k] for i in range(len(run))
                     for k in range(i + 1, min(len(run), i + self.longest) + 1)})
        keys = np.fromiter((_hash(s) for s in subs), dtype=np.uint64, count=len(subs))
        at = np.searchsorted(self._hashes, keys)
        at[at >= len(self._hashes)] = 0
        found = self._hashes[at] == keys
        seg = _jieba_class().empty()
        given = 0
        for j in np.flatnonzero(found):
            freq = int(self._freqs[at[j]])
            seg.add_word(subs[j], freq, None)
            given += freq
        seg.add_word(_PLACEHOLDER, max(self.total - given, 1), None)
        return list(seg.cut(run, True))


@lru_cache(maxsize=1)
def _jieba_class() -> Any:
    """rjieba's Jieba class without importing the `rjieba` package, whose __init__ builds the
    default segmenter (the 0.1 s this module avoids): its extension module is loaded by
    itself and registered, so a later `import rjieba` finds and uses the same module."""
    import importlib.machinery
    import importlib.util
    import sys

    if "rjieba.rjieba" in sys.modules:
        return sys.modules["rjieba.rjieba"].Jieba
    try:
        spec = importlib.util.find_spec("rjieba")
        folder = Path(list(spec.submodule_search_locations or [])[0]) if spec else None
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            so = folder / f"rjieba{suffix}" if folder else None
            if so is not None and so.is_file():
                ext = importlib.util.spec_from_file_location("rjieba.rjieba", so)
                if ext is None or ext.loader is None:
                    break
                module = importlib.util.module_from_spec(ext)
                ext.loader.exec_module(module)
                sys.modules["rjieba.rjieba"] = module
                return module.Jieba
    except (ImportError, OSError, IndexError):
        pass
    import rjieba  # the package as usual: slower, the same class

    return rjieba.Jieba


def open_table(extra: tuple[str, ...]) -> WordTable | None:
    """The machine's table for this dictionary and these extra words; None when there is none
    or it is unreadable (the caller then uses the full segmenter)."""
    return _open(str(cache_dir()), extra)


@lru_cache(maxsize=4)
def _open(folder: str, extra: tuple[str, ...]) -> WordTable | None:
    paths = _paths(extra)
    return None if paths is None else _read(*paths)


def _read(data: Path, meta: Path) -> WordTable | None:
    import numpy as np

    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
        words = int(info["words"])
        # read, not memory-mapped: a file cut short under a mapping would kill the process
        raw = data.read_bytes()
        if len(raw) != 12 * words:
            return None
        hashes = np.frombuffer(raw, dtype="<u8", count=words)
        freqs = np.frombuffer(raw, dtype="<u4", count=words, offset=8 * words)
        return WordTable(hashes, freqs, int(info["total"]), int(info["longest"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


_STALE_S = 600  # a table is written in about a second: an older temp file's writer was killed


def _remove_stale(folder: Path) -> None:
    """Temp files of a table write killed midway (kill -9, a full disk): 4 MB each."""
    import time

    for tmp in folder.glob("jieba-*.tmp"):
        try:
            if time.time() - tmp.stat().st_mtime > _STALE_S:
                tmp.unlink()
        except OSError:
            pass


def build_table(full: Any, extra: tuple[str, ...], extra_freq: int) -> bool:
    """Write the table for jieba's dict.txt with `extra` words at `extra_freq` (as `full`, the
    loaded rjieba segmenter, has them). False, and nothing written, when there is no dict.txt,
    the cache cannot be written, or `full` does not know a sample of dict.txt's words."""
    import numpy as np

    paths = _paths(extra)
    if paths is None:
        return False
    data, meta = paths
    if _read(data, meta) is not None:
        return True  # a table cut short or unreadable is written again
    dict_txt = _dict_txt()
    assert dict_txt is not None
    freq: dict[str, int] = {}
    try:
        with open(dict_txt, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split(" ")
                if len(parts) >= 2 and parts[1].strip().isdigit():
                    freq[parts[0]] = int(parts[1])
    except (OSError, UnicodeDecodeError):
        return False
    words = list(freq)
    if not words or not all(full.has_word(w) for w in words[:: max(1, len(words) // 2000)]):
        return False  # not the dictionary rjieba embeds
    for word in extra:
        freq[word] = extra_freq
    hashes = np.fromiter((_hash(w) for w in freq), dtype="<u8", count=len(freq))
    freqs = np.fromiter(freq.values(), dtype="<u4", count=len(freq))
    order = np.argsort(hashes, kind="stable")
    hashes, freqs = hashes[order], freqs[order]
    if bool((hashes[1:] == hashes[:-1]).any()):
        return False  # a hash collision: no table rather than a wrong one
    info = {"format": _FORMAT, "words": len(hashes), "total": sum(freq.values()),
            "longest": max(len(w) for w in freq)}
    tag = f".{os.getpid()}.tmp"
    try:
        data.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(data.parent)
        with open(str(data) + tag, "wb") as fh:
            fh.write(hashes.tobytes())
            fh.write(freqs.tobytes())
        Path(str(meta) + tag).write_text(json.dumps(info), encoding="utf-8")
        os.replace(str(data) + tag, data)
        os.replace(str(meta) + tag, meta)  # the sidecar last: a table without it is not read
    except OSError:
        return False
    return True
