"""The latest value wins (issue 15 item 6), as a general mechanism: a later session's card
that changes one value of an older card supersedes it — anchored on the subject both name
(identifiers folded across - _ . and aliases), a change said in either language, and a value
of the same kind that differs next to it — in Chinese, in English and across the two; two
different facts about one system both stay; a person's card is proposed to, never rewritten.

Real vaults in tmp_path: sessions ingested and distilled through the CLI, as a user runs it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from cli.main import cli
from vault_engine.collab.review import pending
from vault_engine.sessions.distill.changes import Said, subjects, value_change
from vault_engine.store.model import Card
from vault_engine.store.vault import Vault
from vault_engine.text.entities import subject_key
from vault_engine.text.values import typed_values

from .conftest import commit_as_person

SHANGHAI = ZoneInfo("Asia/Shanghai")
DAY = 86_400_000
T0 = int(dt.datetime(2026, 5, 4, 10, 0, tzinfo=SHANGHAI).timestamp() * 1000)  # a Monday


def run(vault: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], catch_exceptions=False)


def session(sid: str, turns: list[tuple[str, str]], start_ms: int) -> dict:
    return {"id": sid, "timestamp": start_ms, "channel": "slack", "turns": [
        {"role": "user", "name": name, "content": text, "timestamp": start_ms + i * 60_000}
        for i, (name, text) in enumerate(turns)]}


def distil(vault: Path, tmp_path: Path, *sessions: dict) -> dict:
    for s in sessions:
        (tmp_path / f"{s['id']}.json").write_text(json.dumps(s, ensure_ascii=False), "utf-8")
        assert run(vault, "ingest", str(tmp_path / f"{s['id']}.json")).exit_code == 0
    result = run(vault, "distill", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def cards(vault: Path) -> list[Card]:
    return [n for n in Vault.open(vault).load().notes if isinstance(n, Card)]


def card_with(vault: Path, phrase: str) -> Card:
    found = [c for c in cards(vault) if phrase in c.title + " ".join(x.text for x in c.claims)]
    assert len(found) == 1, (phrase, [c.title for c in cards(vault)])
    return found[0]


def supersedes(new: Card, old: Card) -> bool:
    return any(r.type == "SUPERSEDES" and r.link.target == Path(old.path).stem
               for r in new.relations)


# -- the pieces -----------------------------------------------------------------------------

def test_one_subject_key_for_spellings_of_one_name() -> None:
    assert subject_key("dwd.user_events") == subject_key("DWD-User-Events") == "dwd_user_events"
    assert subject_key("dwd_user_events_daily") != subject_key("dwd.user_events")
    assert subject_key("k8s") == subject_key("Kubernetes") == "kubernetes"
    assert {"etl_orders_hourly", "星河科技"} <= subjects("`etl-orders-hourly` 和星河科技")
    assert "刘洋" not in subjects("`checkout-api` 本周主值班是刘洋")  # people are values


def test_typed_values_in_both_languages() -> None:
    said = dt.datetime(2026, 5, 4, 10, tzinfo=SHANGHAI)

    def kinds(text: str) -> list[tuple[str, str]]:
        return [(v.kind, v.value) for v in typed_values(text, said)]

    assert kinds("moved it to 03:30 Beijing time (`30 3 * * *`)") == [
        ("clock", "03:30"), ("clock", "03:30")]
    assert kinds("每天下午 2 点跑") == [("clock", "14:00")]
    # the first number of "from X to Y days" takes the unit of the second
    assert kinds("raising the TTL from 90 to 180 days") == [
        ("duration", "7776000"), ("duration", "15552000")]
    assert kinds("保留 90 天，`INTERVAL 90 DAY`") == [("duration", "7776000")] * 2
    assert kinds("磁盘从 500GB 扩到 1TB，CPU 95%") == [
        ("size", "500000000000"), ("size", "1000000000000"), ("share", "95")]
    assert kinds("会议改到 5 月 12 日") == [("date", "2026-05-12")]
    assert kinds("3 天前，2026 年，两个方案") == [("date", "2026-05-01")]  # no duration here
    assert ("person", "张伟") in kinds("主值班换成张伟了")


SAID_OLD = dt.datetime(2026, 5, 4, 10, tzinfo=SHANGHAI)
SAID_NEW = dt.datetime(2026, 5, 11, 10, tzinfo=SHANGHAI)
CHANGES = [
    # zh → en: a clock time, hyphen and underscore spellings of one DAG, the old value named
    ("`etl-orders-hourly` 这个 DAG 每天北京时间 01:00 跑，schedule 是 `0 1 * * *`。",
     "The `etl_orders_hourly` DAG clashed with the vacuum at 01:00, so we moved it to 04:15.",
     "clock"),
    # en → zh: a duration, dotted and underscored table names
    ("The `ods.page_views` table keeps 30 days of data (TTL 30 days).",
     "`ods_page_views` 的 TTL 从 30 天调到 60 天，风控要回查两个月。", "duration"),
    # zh: a date moved, the old one not named — the same slot (开会 ≈ 会议 ≈ meeting)
    ("下周四下午 3 点和星河科技的人开会，在他们滨江的办公室。",
     "星河科技那边改期了，会议改到 5 月 21 日下午 3 点，地点不变。", "date"),
    # en → zh: a maintenance window postponed (window ≈ 窗口)
    ("The `payments-db` maintenance window is on May 16 at 02:00.",
     "`payments-db` 的维护窗口推迟到 5 月 23 日凌晨 2 点。", "date"),
    # en: a size raised, the old value named
    ("The `redis-cache-01` maxmemory is 4GB.", "We bumped `redis-cache-01` maxmemory from 4GB to 8GB.",
     "size"),
    # zh: a person (the on-call) swapped
    ("`checkout-api` 本周主值班是刘洋。", "`checkout-api` 本周主值班换成张伟了。", "person"),
    # k8s = Kubernetes; a count
    ("Our k8s staging cluster runs 3 nodes.", "We scaled the Kubernetes staging cluster from 3 to 5 nodes.",
     "count"),
]


@pytest.mark.parametrize(("old", "new", "kind"), CHANGES)
def test_a_changed_value_of_one_subject(old: str, new: str, kind: str) -> None:
    why = value_change(Said(new, SAID_NEW), Said(old, SAID_OLD))
    assert why is not None and why.startswith(kind), why


STAY = [
    # zh: one system, another kind of value (a backup time; the disk grew)
    ("`orders-db` 每天凌晨 2 点做全量备份。", "`orders-db` 的磁盘从 500GB 扩到 1TB 了。"),
    # zh: one system, the same kind, another slot (backups kept 7 days; binlog 3 days)
    ("`orders-db` 的备份保留 7 天。", "`orders-db` 的 binlog 保留改成 3 天。"),
    # en: latency measured, a timeout raised — both durations of one API
    ("`search-api` p99 latency is 120ms after the cache fix.",
     "We raised the `search-api` upstream timeout to 800ms."),
    # en → zh: logs kept 14 days; the retry interval changed to 30 seconds
    ("`report-gen` keeps 14 days of logs.", "`report-gen` 的重试间隔改成 30 秒。"),
    # zh: a meeting with a company; the contract signing with it postponed
    ("下周三下午 2 点和华信证券开会。", "华信证券的合同推迟到 5 月 20 日签。"),
    # two tables whose names only share a prefix: not one subject
    ("`dwd.user_events` 保留 90 天。", "The `dwd_user_events_daily` retention moved from 90 to 30 days."),
    # the same value said again is no change
    ("`ods.page_views` 的 TTL 是 30 天。", "We changed nothing: `ods.page_views` TTL is now 30 days."),
]


@pytest.mark.parametrize(("old", "new"), STAY)
def test_two_facts_about_one_system_are_no_change(old: str, new: str) -> None:
    assert value_change(Said(new, SAID_NEW), Said(old, SAID_OLD)) is None


# -- through a vault ------------------------------------------------------------------------

def test_the_latest_value_wins_across_languages_in_a_vault(zh_vault: Path, tmp_path: Path) -> None:
    old = session("zh-data-setup", [
        ("周琳", "`etl-orders-hourly` 这个 DAG 每天北京时间 01:00 跑，schedule 写 `0 1 * * *`。"),
        ("周琳", "顺便把 ClickHouse 的 `ods.page_views` 表 TTL 定一下：保留 30 天，`INTERVAL 30 DAY`。"),
        ("周琳", "下周四下午 3 点和星河科技的人开会，在他们滨江的办公室。"),
        ("周琳", "`orders-db` 每天凌晨 2 点做全量备份，备份保留 7 天。"),
    ], T0)
    new = session("en-data-followup", [
        ("Maya Chen", "Following up on the `ods_page_views` table. Compliance needs longer history, "
                      "so we're raising the TTL from 30 to 90 days."),
        ("Maya Chen", "Also the `etl_orders_hourly` DAG clashed with the vacuum at 01:00, so we moved "
                      "it to 04:15 Beijing time (`15 4 * * *`)."),
        ("Maya Chen", "星河科技那边改期了，会议改到 5 月 21 日下午 3 点，地点不变。"),
        ("Maya Chen", "`orders-db` 的磁盘从 500GB 扩到 1TB 了，binlog 保留改成 3 天。"),
    ], T0 + 7 * DAY)
    out = distil(zh_vault, tmp_path, old, new)
    later = next(s for s in out["sessions"] if s["session"] == "en-data-followup")
    assert len(later["superseded"]) == 3, later["superseded"]
    until = dt.datetime.fromtimestamp((T0 + 7 * DAY) / 1000, dt.UTC)
    for old_phrase, new_phrase in (("01:00 跑", "04:15"), ("保留 30 天", "from 30 to 90 days"),
                                   ("星河科技的人开会", "改到 5 月 21 日")):
        before, after = card_with(zh_vault, old_phrase), card_with(zh_vault, new_phrase)
        assert all(c.status == "superseded" and c.valid_until == until for c in before.claims)
        assert supersedes(after, before), (after.title, after.relations)
    # the backup is not the disk, nor the binlog: it stays
    backup = card_with(zh_vault, "全量备份")
    assert all(c.status == "supported" for c in backup.claims)
    assert not any(r.type == "SUPERSEDES" for c in cards(zh_vault) for r in c.relations
                   if r.link.target == Path(backup.path).stem)


def test_different_facts_about_one_system_both_stay_in_a_vault(zh_vault: Path, tmp_path: Path) -> None:
    old = session("en-search-notes", [
        ("Tom Becker", "`search-api` p99 latency is 120ms after the cache fix."),
        ("Tom Becker", "`report-gen` keeps 14 days of logs."),
        ("Tom Becker", "下周三下午 2 点和华信证券开会。"),
    ], T0)
    new = session("zh-search-later", [
        ("陈静", "We raised the `search-api` upstream timeout to 800ms."),
        ("陈静", "`report-gen` 的重试间隔改成 30 秒。"),
        ("陈静", "华信证券的合同推迟到 5 月 20 日签。"),
    ], T0 + 3 * DAY)
    out = distil(zh_vault, tmp_path, old, new)
    assert all(s["superseded"] == [] for s in out["sessions"]), [s["superseded"] for s in out["sessions"]]
    assert all(c.status == "supported" for card in cards(zh_vault) for c in card.claims)


def test_a_persons_card_is_proposed_to_never_rewritten(zh_vault: Path, tmp_path: Path) -> None:
    old = session("zh-ttl-old", [("周琳", "`ods.page_views` 表的 TTL 定为保留 30 天。")], T0)
    distil(zh_vault, tmp_path, old)
    mine = card_with(zh_vault, "保留 30 天")
    path = zh_vault / mine.path
    path.write_text(path.read_text("utf-8") + "\n我补充：30 天是跟法务确认过的。\n", "utf-8")
    commit_as_person(zh_vault, "my note on the TTL")
    before = path.read_bytes()
    new = session("en-ttl-new", [("Maya Chen", "We're raising the `ods_page_views` TTL from 30 to 90 days.")],
                  T0 + 7 * DAY)
    out = distil(zh_vault, tmp_path, new)
    later = out["sessions"][0]
    assert path.read_bytes() == before  # not a byte of theirs changed
    assert later["superseded"] == [] and len(later["proposals"]) == 1, later
    assert "superseded" in later["proposals"][0] and "duration" in later["proposals"][0]
    # the new card, alaya's, still says what it supersedes …
    assert supersedes(card_with(zh_vault, "from 30 to 90 days"), card_with(zh_vault, "保留 30 天"))
    # … and the status change waits in the review queue for the person to decide
    assert out["review_commit"]
    items = pending(Vault.open(zh_vault))
    assert [i.path for i in items] == [mine.path]
    assert "status: superseded" in items[0].diff and "valid_until" in items[0].diff


# -- who holds a value: a role, a person's event, a release ----------------------------------

HELD = [
    # zh → en: a person as the value, the role as the subject (primary on-call ≈ 主值班)
    ("payment 线的 primary on-call 是符文博，secondary 是韦婷。",
     "Fu Wenbo is off sick, so Wei Ting is taking over as primary on-call for the payments line.",
     "person"),
    # en → zh: the owner of a thing changed hands (owner ≈ 负责人)
    ("Tom Becker owns the billing migration.", "billing 迁移的负责人换成陈静了。", "person"),
    # zh: a family's moving date moved — the event (搬家) and the person both statements name
    ("黎佳怡家定了 5 月 16 号搬家，从古北搬到闵行。", "黎佳怡说搬家改到 5 月 23 号了，房东交房晚了一周。", "date"),
    # zh → en: a person's check-up pushed back (体检 ≈ checkup)
    ("陈静 5 月 12 号去体检。", "陈静's checkup was pushed to May 19.", "date"),
    # zh → en: a release's launch (上架 ≈ launch), the version as the subject
    ("iOS 4.8.0 定在 5 月 6 日上架，这版带新收银台。",
     "Resubmitted 4.8.0 build 1127. New launch date is Thursday May 14.", "date"),
    # en: a version's release slipped
    ("v2.3 release is planned for May 7.", "The v2.3 release slipped to May 20.", "date"),
]


@pytest.mark.parametrize(("old", "new", "kind"), HELD)
def test_a_value_held_by_a_role_a_person_or_a_release(old: str, new: str, kind: str) -> None:
    why = value_change(Said(new, SAID_NEW), Said(old, SAID_OLD))
    assert why is not None and why.startswith(kind), why


HELD_APART = [
    # a role of another thing: the search on-call is not the payments on-call
    ("payment 线的 primary on-call 是符文博。", "Wei Ting is taking over as primary on-call for search."),
    # the owner of another thing
    ("Tom Becker owns the billing migration.", "search 的负责人换成陈静了。"),
    # another role of the same line: the owner of payments is not its on-call
    ("payment 线的 primary on-call 是符文博。", "The payments owner is now Wei Ting."),
    # one person, two events: her check-up moved, not her move
    ("黎佳怡家定了 5 月 16 号搬家。", "黎佳怡的体检改到 5 月 9 号了。"),
    # one event, two people: his move is not hers
    ("黎佳怡家定了 5 月 16 号搬家。", "张伟搬家改到 5 月 23 号了。"),
    # zh → en: a person's event and a meeting about it — no change cue next to the date
    ("Maya Chen flies to Berlin on May 12.", "Maya Chen 5 月 14 日要交季度报告。"),
    # two releases: 4.8.0's date is not 4.9.0's
    ("iOS 4.8.0 定在 5 月 6 日上架。", "The 4.9.0 launch moved to June 3."),
    # "from 2min to 5min" changes no statement that never said 2min (a timeout of 15 分钟)
    ("risk-feature-agg 的 checkpoint 一直超时，下游延迟一度飙到 15 分钟。",
     "risk-feature-agg: the checkpoint interval changed from 2min to 5min."),
]


@pytest.mark.parametrize(("old", "new"), HELD_APART)
def test_values_of_other_holders_are_no_change(old: str, new: str) -> None:
    assert value_change(Said(new, SAID_NEW), Said(old, SAID_OLD)) is None


def test_a_role_a_move_and_a_launch_in_a_vault(zh_vault: Path, tmp_path: Path) -> None:
    old = session("zh-handover", [
        ("欧阳蕾", "下周开始两周，payment 线的 primary on-call 是符文博，secondary 是韦婷。"),
        ("黎佳怡", "私事记一下：我们家定了 5 月 16 号搬家，从古北搬到闵行。"),
        ("欧阳蕾", "iOS 4.8.0 定在 5 月 6 日上架，这版带新收银台。"),
        ("黎佳怡", "另外我 5 月 9 号去做年度体检，在美年大健康。"),
    ], T0 - 14 * DAY)
    new = session("en-weekly-sync", [
        ("Kenji Watanabe", "Fu Wenbo is off sick, so Wei Ting is taking over as primary on-call for the "
                           "payments line through Sunday May 10."),
        ("黎佳怡", "对了，私事顺便说一下：搬家改到 5 月 23 号了，房东那边交房晚了一周。"),
        ("Olivia Brandt", "Resubmitted 4.8.0 build 1127 at 23:40 last night. New launch date is Thursday May 14."),
    ], T0)
    out = distil(zh_vault, tmp_path, old, new)
    later = next(s for s in out["sessions"] if s["session"] == "en-weekly-sync")
    assert len(later["superseded"]) == 3, later["superseded"]
    for old_phrase, new_phrase in (("primary on-call 是符文博", "Wei Ting is taking over"),
                                   ("5 月 16 号搬家", "搬家改到 5 月 23 号"),
                                   ("5 月 6 日上架", "New launch date")):
        before, after = card_with(zh_vault, old_phrase), card_with(zh_vault, new_phrase)
        assert all(c.status == "superseded" and c.valid_until for c in before.claims), before.title
        assert supersedes(after, before), (after.title, after.relations)
    # "New launch date is …" leans on the sentence before it: the card names the build
    assert "1127" in " ".join(c.text for c in card_with(zh_vault, "New launch date").claims)
    # her check-up is another event of hers: it stays
    checkup = card_with(zh_vault, "体检")
    assert all(c.status == "supported" for c in checkup.claims)
