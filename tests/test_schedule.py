"""Introspection on a schedule (seed 000 §5.2, every 4 hours): `alaya introspect --if-due` for
cron and timers, and the same schedule inside `alaya watch` and `alaya serve`, on the one
clock (ALAYA_NOW)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.main import cli
from compilers.schedule import IntrospectSchedule
from compilers.serve import RecallServer
from vault_engine.care.introspect import runner
from vault_engine.care.introspect.schedule import STATE, is_due
from vault_engine.store.vault import Vault

from .conftest import git_log
from .test_recall import graph_vault  # noqa: F401  (fixture)


def if_due(vault: Path, *extra: str) -> dict:
    result = CliRunner().invoke(cli, ["--vault", str(vault), "introspect", "--if-due", "--json",
                                      *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_if_due_runs_then_waits_four_hours(graph_vault: Path,  # noqa: F811
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T08:00:00Z")
    first = if_due(graph_vault)
    assert first["ran"] is True and [p["name"] for p in first["phases"]] == list(runner.PHASES)
    assert first["refresh"]["build"] is not None  # the artifacts follow what it wrote
    state = json.loads((graph_vault / ".alaya" / STATE).read_text())
    assert state["last_run"] == "2026-12-01T08:00:00Z"
    commits = git_log(graph_vault)
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T11:59:00Z")
    waiting = if_due(graph_vault)
    assert waiting == {"ran": False, "due": False, "every_hours": 4.0, "phases": [],
                       "last_run": "2026-12-01T08:00:00Z", "next_run": "2026-12-01T12:00:00Z"}
    assert git_log(graph_vault) == commits  # nothing ran, nothing committed
    text = CliRunner().invoke(cli, ["--vault", str(graph_vault), "introspect", "--if-due"])
    assert "Not due: last full run 2026-12-01T08:00:00Z, next at 2026-12-01T12:00:00Z" in text.output
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T12:00:00Z")
    assert if_due(graph_vault)["ran"] is True


def test_partial_runs_do_not_reset_the_schedule_and_zero_turns_it_off(
        graph_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T08:00:00Z")
    one = CliRunner().invoke(cli, ["--vault", str(graph_vault), "introspect", "--phase", "gaps",
                                   "--json"])
    assert one.exit_code == 0 and not (graph_vault / ".alaya" / STATE).exists()
    bad = CliRunner().invoke(cli, ["--vault", str(graph_vault), "introspect", "--if-due",
                                   "--phase", "gaps"])
    assert bad.exit_code == 2 and "drop --phase" in bad.output
    cfg = graph_vault / "alaya.toml"
    cfg.write_text(cfg.read_text().replace("every_hours = 4.0", "every_hours = 0"))
    off = if_due(graph_vault)
    assert off["ran"] is False and off["next_run"] is None
    assert "the schedule is off" in CliRunner().invoke(
        cli, ["--vault", str(graph_vault), "introspect", "--if-due"]).output


def test_schedule_in_a_long_running_process(graph_vault: Path,  # noqa: F811
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T08:00:00Z")
    t = [0.0]
    runs: list[list[str]] = []
    sched = IntrospectSchedule(Vault.open(graph_vault), check_every=60, first_check=60,
                               clock=lambda: t[0],
                               on_run=lambda rs: runs.append([r.name for r in rs]))
    assert sched() is False and runs == []  # not in the first minute after start
    t[0] = 61
    assert sched() is True and runs == [list(runner.PHASES)]
    t[0] = 200
    assert sched() is False  # just ran: due again at 12:00
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T12:30:00Z")
    t[0] = 230
    assert sched() is False  # checked less than a minute ago
    t[0] = 300
    assert sched() is True and len(runs) == 2
    assert is_due(Vault.open(graph_vault)).next_run is not None


def test_a_failed_scheduled_run_is_reported_and_retried_later(
        graph_vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    t = [100.0]
    errors: list[str] = []

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(runner, "introspect", broken)
    sched = IntrospectSchedule(Vault.open(graph_vault), first_check=0, clock=lambda: t[0],
                               on_error=lambda e: errors.append(str(e)), retry_after=3600)
    assert sched() is False and errors == ["disk full"]
    t[0] = 100 + 61
    assert sched() is False and errors == ["disk full"]  # backing off, not every minute
    t[0] = 100 + 3601
    assert sched() is False and len(errors) == 2


def test_serve_and_its_watcher_run_the_schedule(graph_vault: Path,  # noqa: F811
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_NOW", "2026-12-01T08:00:00Z")
    server = RecallServer(Vault.open(graph_vault), watch=True)
    ran = threading.Event()

    def on_run(results: list) -> None:
        ran.set()
        server.stop.set()

    sched = IntrospectSchedule(Vault.open(graph_vault), first_check=0, on_run=on_run)
    thread = threading.Thread(target=server.serve_forever, kwargs={"tick": sched}, daemon=True)
    thread.start()
    assert ran.wait(60), "the watcher inside serve never ran the schedule"
    thread.join(30)
    assert any(m.startswith("introspect: ") for m in git_log(graph_vault))
    assert json.loads((graph_vault / ".alaya" / STATE).read_text())["last_run"] == \
        "2026-12-01T08:00:00Z"
