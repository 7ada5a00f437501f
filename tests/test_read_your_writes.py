"""Read your own writes: after every write command the next recall sees the change, with no
manual compile; a hand edit nobody compiled makes recall say `stale: true` with the fix; the
seed's stdin JSON example works on the demo vault through the installed `alaya`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.options import CompileOptions
from compilers.pipeline import compile_vault
from vault_engine import stamps
from vault_engine.store.init_vault import init_vault
from vault_engine.store.vault import Vault

from .test_recall import HASH, SCHEMA, card, graph_vault  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
ALAYA = str(Path(sys.executable).parent / "alaya")


def cli_json(vault: Path, *args: str, input: str | None = None) -> dict:
    result = CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # stderr may say a person's uncommitted note was not committed


def recall(vault: Path, *args: str, input: str | None = None) -> dict:
    out = cli_json(vault, "recall", *args, "--json", input=input)
    jsonschema.validate(out, SCHEMA)
    return out


def ids(result: dict, k: int = 3) -> list[str]:
    return [n["id"] for n in result["nodes"][:k]]


# -- every write command, then recall ------------------------------------------------------

def test_new_then_recall_returns_the_card_in_english_and_chinese(graph_vault: Path) -> None:  # noqa: F811
    en = cli_json(graph_vault, "new", "--title", "Zebra crossing sensors fail in fog",
                  "--type", "gotcha", "--claim", "Fog blinds the zebra crossing sensors",
                  "--json")
    assert en["refresh"]["build"] and en["refresh"]["error"] is None
    zh = cli_json(graph_vault, "new", "--title", "斑马线传感器在雾天失灵", "--type", "gotcha",
                  "--claim", "雾天会让斑马线传感器失灵", "--json")
    first = recall(graph_vault, "Zebra crossing sensors fail in fog")
    assert en["id"] in ids(first) and first["stale"] is False and first["warnings"] == []
    second = recall(graph_vault, "斑马线传感器在雾天失灵")
    assert zh["id"] in ids(second) and second["stale"] is False


def test_link_and_unlink_change_the_next_recall(graph_vault: Path) -> None:  # noqa: F811
    follow = ["--from-nodes", "card-gateway", "--rel", "CAUSED_BY", "--depth", "1"]
    assert "card-merge" not in ids(recall(graph_vault, *follow), 10)
    linked = cli_json(graph_vault, "link", "Gateway", "Bad merge", "--rel", "CAUSED_BY",
                      "--json")
    assert linked["changed"] and linked["refresh"]["build"]
    assert "card-merge" in ids(recall(graph_vault, *follow), 10)
    cli_json(graph_vault, "unlink", "Gateway", "Bad merge", "--rel", "CAUSED_BY", "--json")
    assert "card-merge" not in ids(recall(graph_vault, *follow), 10)


def test_feedback_deprecate_takes_the_card_out_of_recall(graph_vault: Path) -> None:  # noqa: F811
    made = cli_json(graph_vault, "new", "--title", "Postmortems are written within two days",
                    "--type", "instruction", "--json")  # alaya's own card: feedback archives it
    assert made["id"] in ids(recall(graph_vault, "postmortems written within two days"))
    out = cli_json(graph_vault, "feedback", "deprecate", made["id"], "--reason", "obsolete",
                   "--json")
    assert out["refresh"]["build"]
    assert made["id"] not in ids(recall(graph_vault, "postmortems written within two days"), 10)


def test_ingest_distill_and_capture_are_recalled_next(graph_vault: Path, tmp_path: Path) -> None:  # noqa: F811
    session = tmp_path / "session-20261130-101500.json"
    session.write_text(json.dumps({"id": "session-20261130-101500", "turns": [
        {"role": "user", "content": "The nightly backup of the wombat cluster failed again."},
        {"role": "assistant", "content": "The wombat backup failed because the disk quota "
                                         "was exceeded; I raised the quota to 2 TB."}]}))
    cli_json(graph_vault, "ingest", str(session), "--json")
    got = recall(graph_vault, "wombat cluster backup")
    assert got["nodes"][0]["id"] == "session-20261130-101500" and got["stale"] is False
    distilled = cli_json(graph_vault, "distill", "--json")
    assert distilled["refresh"] is not None and distilled["refresh"]["build"]
    cards = [n for n in recall(graph_vault, "wombat backup disk quota", "--kind", "card")["nodes"]]
    assert cards and "wombat" in (cards[0]["title"] + cards[0]["snippet"]).lower()
    transcript = tmp_path / "chat-0412.jsonl"
    transcript.write_text(json.dumps({"role": "user", "content": "羊驼服务器的证书明天过期"})
                          + "\n")
    captured = cli_json(graph_vault, "capture", str(transcript), "--json")
    assert captured["refresh"]["build"]
    assert recall(graph_vault, "羊驼服务器 证书 过期")["nodes"][0]["id"] == "chat-0412"


def test_a_saved_query_is_recalled_next(graph_vault: Path) -> None:  # noqa: F811
    saved = recall(graph_vault, "checkout outage", "--save")["saved"]
    assert saved["path"].startswith("queries/") and saved["refresh"]["build"]
    again = recall(graph_vault, "checkout outage", "--kind", "query")
    assert again["stale"] is False and again["nodes"][0]["path"] == saved["path"]


def test_no_refresh_when_disabled_never_compiled_or_proposed(graph_vault: Path,  # noqa: F811
                                                             tmp_path: Path) -> None:
    cfg = graph_vault / "alaya.toml"
    cfg.write_text(cfg.read_text().replace("after_write = true", "after_write = false"))
    out = cli_json(graph_vault, "new", "--title", "Quokka latency budget", "--json")
    assert out["refresh"] == {"build": None, "ms": 0.0, "error": None,
                              "skipped": "[compile] after_write = false"}
    stale = recall(graph_vault, "quokka latency budget")
    assert stale["stale"] is True and any("alaya compile" in w for w in stale["warnings"])
    cfg.write_text(cfg.read_text().replace("after_write = false", "after_write = true"))
    proposed = cli_json(graph_vault, "new", "--title", "Proposed wallaby", "--propose", "--json")
    assert proposed["refresh"]["skipped"].startswith("proposed for review")
    bare = tmp_path / "bare"
    init_vault(bare)
    never = cli_json(bare, "new", "--title", "Never compiled", "--json")
    assert never["refresh"]["skipped"].startswith("never compiled")
    assert not (bare / ".alaya" / "current.json").exists()


def test_init_compiles_so_the_first_new_is_recalled(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    target = tmp_path / "fresh"
    init = cli_json(tmp_path, "init", str(target), "--json")
    assert init["build"]
    made = cli_json(target, "new", "--title", "Platypus deploys need two approvals", "--json")
    assert made["id"] in ids(recall(target, "platypus deploys approvals"))
    assert cli_json(tmp_path, "init", str(tmp_path / "bare"), "--no-compile",
                    "--json")["build"] is None


# -- stale: true when the vault changed behind recall's back ----------------------------

def test_hand_edit_add_delete_touch_and_compile(graph_vault: Path) -> None:  # noqa: F811
    assert recall(graph_vault, "checkout outage")["stale"] is False
    path = graph_vault / "cards" / "fact" / "Gateway.md"
    path.write_text(path.read_text() + "\nThe gateway also serves 退款 traffic.\n")  # in place
    edited = recall(graph_vault, "checkout outage")
    assert edited["stale"] is True and edited["changed_notes"] == ["cards/fact/Gateway.md"]
    assert any("1 edited" in w and "alaya compile" in w for w in edited["warnings"])
    card(graph_vault, "Brand new", "Written by hand in Obsidian.", id="card-new", title="Brand new")
    (graph_vault / "cards" / "fact" / "Bad merge.md").unlink()
    both = recall(graph_vault, "checkout outage")
    assert set(both["changed_notes"]) == {"cards/fact/Gateway.md", "cards/fact/Brand new.md",
                                          "cards/fact/Bad merge.md"}
    assert any("1 added" in w and "1 deleted" in w for w in both["warnings"])
    text = CliRunner().invoke(cli, ["--vault", str(graph_vault), "recall", "checkout outage"])
    assert "the vault changed since the last compile" in text.output
    compile_vault(Vault.open(graph_vault), CompileOptions(embedder=HASH))
    assert recall(graph_vault, "checkout outage")["stale"] is False
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # a touch: new mtime, same bytes
    assert recall(graph_vault, "checkout outage")["stale"] is False


def test_notes_recall_does_not_read_leave_it_fresh(graph_vault: Path) -> None:  # noqa: F811
    """Reports, the archive, templates, MEMORY.md and persona.md are not recall targets."""
    lint = CliRunner().invoke(cli, ["--vault", str(graph_vault), "lint", "--write-report"])
    assert (graph_vault / "reports" / "lint.md").exists(), lint.output
    (graph_vault / "MEMORY.md").write_text((graph_vault / "MEMORY.md").read_text() + "\n- 手写的一条\n")
    (graph_vault / "reports" / "mine.md").write_text("# a person's report\n")
    assert recall(graph_vault, "checkout outage")["stale"] is False
    (graph_vault / "notes.md").write_text("A root note is a recall target.\n")
    assert recall(graph_vault, "checkout outage")["changed_notes"] == ["notes.md"]


def test_large_vault_checks_folders_and_the_results(graph_vault: Path,  # noqa: F811
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Above FULL_CHECK_NOTES notes only folders and the returned notes are compared."""
    monkeypatch.setattr(stamps, "FULL_CHECK_NOTES", 0)
    gateway = graph_vault / "cards" / "fact" / "Gateway.md"
    gateway.write_text(gateway.read_text().replace("serves", "still serves"))
    hit = recall(graph_vault, "gateway serves checkout traffic")
    assert hit["nodes"][0]["id"] == "card-gateway" and hit["stale"] is True
    miss = recall(graph_vault, "bad merge reverted", "--top-k", "1")
    assert miss["stale"] is False  # the documented limit: an in-place edit of another note
    (graph_vault / "cards" / "fact" / "sub").mkdir()
    card(graph_vault, "sub/Deeper", "A note in a new folder.", id="card-deep", title="Deeper")
    deeper = recall(graph_vault, "bad merge reverted", "--top-k", "1")
    assert "cards/fact/sub/Deeper.md" in deeper["changed_notes"]


def test_a_build_without_stamps_cannot_tell(graph_vault: Path) -> None:  # noqa: F811
    current = json.loads((graph_vault / ".alaya" / "current.json").read_text())["build"]
    (graph_vault / ".alaya" / "builds" / current / "recall" / stamps.STAMPS).unlink()
    out = recall(graph_vault, "checkout outage")
    assert out["stale"] is None and any("cannot tell" in w for w in out["warnings"])


# -- the seed's agent example ----------------------------------------------------------

@pytest.fixture(scope="module")
def demo_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`alaya demo` once for this module: the real bundled embedder, offline."""
    base = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(base))
        mp.setenv("GIT_CONFIG_GLOBAL", str(base / ".gitconfig"))
        mp.delenv("ALAYA_EMBED_PROVIDER", raising=False)
        result = CliRunner().invoke(cli, ["demo", "--dir", str(base / "vault")])
        assert result.exit_code == 0, result.output
    yield base / "vault"


def installed(vault: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALAYA_")}
    return subprocess.run([ALAYA, *args], input=stdin, capture_output=True, text=True,
                          cwd=vault, env=env, timeout=120)


def test_seed_stdin_example_works_on_the_demo_vault(demo_vault: Path) -> None:
    query = '{"concepts": ["gateway restart"], "relations": ["CAUSED_BY"], "depth": 2}'
    proc = installed(demo_vault, "recall", "--json", stdin=query)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    jsonschema.validate(out, SCHEMA)
    assert out["query"]["concepts"] == ["gateway restart"] and out["query"]["depth"] == 2
    assert out["query"]["relations"] == ["CAUSED_BY"] and out["nodes"]
    assert any("restart" in (n["title"] + n["snippet"]).lower() for n in out["nodes"][:3])
    # the full CLI reads it too (--format prompt is not the fast path), and flags win
    prompt = installed(demo_vault, "recall", "--format", "prompt", "--top-k", "2", stdin=query)
    assert prompt.returncode == 0 and 1 <= prompt.stdout.count("[[") <= 2
    bad = installed(demo_vault, "recall", "--json", stdin="{not json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"] == "UsageError"
    empty = installed(demo_vault, "recall", "--json", stdin="")
    assert empty.returncode == 2 and "nothing to recall" in json.loads(empty.stdout)["message"]


def test_new_then_recall_with_the_bundled_model(demo_vault: Path, tmp_path: Path) -> None:
    vault = tmp_path / "copy"
    shutil.copytree(demo_vault, vault)
    for title in ("Rotate the Grafana API key every 90 days", "灰度发布前先检查 Redis 主从延迟"):
        made = installed(vault, "new", "--title", title, "--type", "constraint", "--json")
        assert made.returncode == 0, made.stderr
        card_id = json.loads(made.stdout)["id"]
        proc = installed(vault, "recall", title, "--json")
        out = json.loads(proc.stdout)
        assert card_id in ids(out) and out["stale"] is False, (title, ids(out))
