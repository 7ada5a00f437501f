"""Card types, round 3 (issue 15): mechanisms found missing on a held-out set, each tested with
Chinese and English sentences written for this file (not taken from the benchmark sets).

- a bracketed aside closed on its line is one sentence with its clause, whatever marks it holds;
- a culprit named without 根因/root cause (罪魁祸首, 查下来是, the culprit was) is a cause;
- a failure that no longer happens after a change (不 OOM 了, the panic is gone, stopped
  crashing, 之后…能正确…) is the fix; an error word in the problem's turn (panics) opens it;
- a choice said by what was picked or dropped (最后还是选了, 那套不搞, we went with, opted for)
  is a decision; a convention on how text looks (统一大写) is a preference;
- a request under a standing mark (以后…, whenever you …) is no task for now; a clause
  pointing back to the rule before it (也按这个来) makes that rule the agent's instruction;
  a procedure that holds from now on (以后…先…再…) is a duty;
- a statement dated to a day said outright is an event even with no event word; a bare
  weekday or a repeating window is not; discomfort (强迫症, 看着难受) says a preference.
"""

from __future__ import annotations

import pytest

from vault_engine.sessions.distill.directive import directive
from vault_engine.text.segment import sentences

from .test_distill_types import distilled, units_of


def kinds_of(text: str, role: str = "user") -> list[str | None]:
    return [u.kind for u in units_of((role, text))[0] if not u.consumed]


# -- sentences ------------------------------------------------------------------------------

def test_a_bracketed_aside_keeps_its_sentence_whole() -> None:
    text = "以后改表结构（ALTER TABLE ... ADD COLUMN 这类）先发我看一眼。下一句。"
    assert [s.text for s in sentences(text)] == [
        "以后改表结构（ALTER TABLE ... ADD COLUMN 这类）先发我看一眼。", "下一句。"]
    text = "Run the backfill (slow. really slow.) overnight. Then report."
    assert [s.text for s in sentences(text)] == [
        "Run the backfill (slow. really slow.) overnight.", "Then report."]
    # an aside that is itself the end of a sentence still ends it
    assert [s.text for s in sentences("他说（我明天到。）然后走了。")] == ["他说（我明天到。）", "然后走了。"]


# -- causes and fixes -----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "罪魁祸首是定时任务每分钟都全量刷新缓存，把 Redis 的带宽打满了。",
    "查下来是 ingress 的 proxy-read-timeout 只有 30 秒，大文件导出全被切断了。",
    "The culprit was a cron job that rotated the logs while the agent still held them open.",
])
def test_a_culprit_named_without_root_cause_words_is_a_cause(text: str) -> None:
    assert kinds_of(text) == ["gotcha"]


@pytest.mark.parametrize("problem,fix,phrase", [
    ("打包镜像的时候一直 OOM，节点内存才 4G。",
     "把并发构建从 4 改成 1，重新跑了一遍，不 OOM 了。", "不 OOM 了"),
    ("My CLI panics on startup with a tokio runtime error.",
     "Moved the blocking call into spawn_blocking and the panic is gone.", "the panic is gone"),
    ("The sidecar keeps crashing every few minutes.",
     "Raising its memory limit to 256Mi did it; it stopped crashing.", "stopped crashing"),
    ("退款接口偶尔失败，事务没有回滚。",
     "测了一下，加上 @Transactional 之后退款失败时余额能正确回滚。", "能正确回滚"),
])
def test_a_failure_gone_after_a_change_is_the_fix(problem: str, fix: str, phrase: str) -> None:
    result = distilled(("user", problem), ("assistant", "Let me look."), ("user", fix))
    fixes = [c for c in result.cards if c.type == "gotcha"
             and any(cl.text.startswith(("Fix: ", "修复：")) and phrase in cl.text for cl in c.claims)]
    assert fixes, [(c.type, [cl.text for cl in c.claims]) for c in result.cards]


def test_a_status_report_is_still_no_fix() -> None:
    assert "fix" not in kinds_of("三个副本现在全部 Running，监控也绿了。")
    assert "fix" not in kinds_of("All pods are running and healthy.")


# -- decisions, conventions -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "最后还是选了 Temporal 做编排，Airflow 那套不搞了，调度和重试都太绕。",
    "我们组最终用了 pnpm workspace，lerna 不再维护了。",
    "We went with Postgres over Mongo because the reports need joins.",
    "We opted for weekly releases instead of daily ones.",
    "The `--confirm` flag stays the default so nobody deletes a bucket by accident.",
])
def test_a_choice_said_by_what_was_picked_or_dropped_is_a_decision(text: str) -> None:
    assert "decision" in kinds_of(text)


def test_a_value_steady_at_is_no_decision() -> None:
    # 稳定在 is where a metric settled, not a choice (定在 alone is)
    assert "decision" not in kinds_of("扩容之后 CPU 稳定在 40% 左右。")
    assert kinds_of("周报的截止时间定在每周五下午 6 点。") == ["decision"]


@pytest.mark.parametrize("text,kind", [
    ("变量名统一小驼峰，常量全大写加下划线。", "preference"),
    ("commit message 统一用英文，标题不超过 50 个字符。", "decision"),  # a rule of the work
])
def test_a_convention_on_how_text_looks_is_a_preference(text: str, kind: str) -> None:
    assert kinds_of(text) == [kind]


# -- standing requests, pointing back, procedures -------------------------------------------

@pytest.mark.parametrize("text", [
    "Whenever you propose a schema change, put the down migration right next to it.",
    "麻烦以后涉及线上配置的改动，先给我一份 diff 确认，我看过再给执行命令。",
])
def test_a_request_under_a_standing_mark_is_an_instruction(text: str) -> None:
    assert kinds_of(text) == ["instruction"]


def test_a_one_off_request_stays_a_task() -> None:
    assert kinds_of("帮我把这个 PR 合一下。") == [None]
    assert kinds_of("Can you check the disk on db-3?") == [None]


def test_a_clause_pointing_back_makes_the_rule_the_agents() -> None:
    units = [u for u in units_of(("user", "日志统一用 JSON 格式输出到 stdout，你写示例代码的时候也按这个来。"))[0]
             if not u.consumed]
    assert [u.kind for u in units] == ["instruction"]
    assert "JSON" in units[0].text and "也按这个来" in units[0].text
    assert directive("Write the examples the same way from now on.") == "instruction"


# -- dates and likings ----------------------------------------------------------------------

@pytest.mark.parametrize("text,kind", [
    ("下周三晚上 22:00 我来切主库。", "event"),
    ("I'm off from Nov 2 to Nov 6, Ravi covers the reviews.", "event"),
    ("The index rebuild is scheduled for Saturday, Oct 24, 02:00.", "event"),
    ("I'll rotate the signing key on Friday, Oct 16.", "event"),
])
def test_a_statement_dated_to_a_day_said_outright_is_an_event(text: str, kind: str) -> None:
    assert kind in kinds_of(text)


def test_a_bare_weekday_window_is_no_event() -> None:
    # a window on weekdays repeats; no week is said, so the dated fallback leaves it alone
    assert "event" not in kinds_of("窗口就按这个，周二周四 14 点到 17 点。")
    assert "event" not in kinds_of("Office hours: Tuesday 14:00 to 17:00.")


@pytest.mark.parametrize("text", [
    "回复里代码块都标上语言，我有点强迫症，没标的看着难受。",
    "我一般不看长语音，有事直接发文字。",
])
def test_discomfort_and_habits_say_a_preference(text: str) -> None:
    assert "preference" in kinds_of(text)


# -- who, where, and what leans on the clause before ----------------------------------------

def test_a_place_and_a_mentor_are_facts_beside_the_event() -> None:
    units = [u for u in units_of(("user", "11 月 2 日（周一）测试组来一个新同事骆一鸣，座位在 3F-208，导师是韩露。"))[0]
             if not u.consumed]
    assert [u.kind for u in units] == ["event", "fact"]
    assert "3F-208" in units[1].text and "导师是韩露" in units[1].text
    assert kinds_of("I'm based in Chengdu, so late calls are fine.")[0] == "fact"


def test_who_to_ask_while_someone_is_away_carries_the_time_it_leans_on() -> None:
    result = distilled(("user", "钟岚 11 月 9 日到 11 月 20 日休年假，这段时间 search-api 的事都找唐宁。"))
    fact = next(c for c in result.cards if c.type == "fact")
    assert "唐宁" in fact.claims[0].text and "11 月 9 日" in fact.claims[0].text
    assert any(c.type == "event" for c in result.cards)
    result = distilled(("user", "我周一周三在深圳办公室，线下评审就别往这两天以外排了。"))
    pref = next(c for c in result.cards if c.type == "preference")
    assert "周一周三" in pref.claims[0].text  # the days it points back to


def test_a_reason_then_so_a_change_is_one_decision() -> None:
    text = ("Legal says invoices must be kept for seven years for the tax audit, "
            "so we're extending the retention from 3 to 7 years.")
    units = [u for u in units_of(("user", text))[0] if not u.consumed]
    assert [u.kind for u in units] == ["decision"] and "seven years" in units[0].text
    assert kinds_of("合规那边说日志至少要留 180 天，所以日志保留统一改成 180 天。") == ["decision"]


def test_a_must_about_the_users_own_life_is_their_preference() -> None:
    assert directive("订酒店必须有早餐，我早上要吃了再出门。") == "preference"
    assert directive("出差订机票必须靠窗，我在飞机上要睡觉。") == "preference"
    assert directive("以后所有线上变更必须先在预发跑一遍。") == "instruction"  # a rule of the work


@pytest.mark.parametrize("text", [
    "消息队列的 at-least-once 只保证不丢，不保证不重，所以不能指望它去重。",
    "You can't rely on the ETag here; the CDN strips it on compressed responses.",
])
def test_a_limit_not_to_rely_on_is_a_trap(text: str) -> None:
    assert kinds_of(text) == ["gotcha"]


def test_cancelling_the_culprit_and_an_immediate_recovery_is_the_fix() -> None:
    result = distilled(("user", "支付库突然写不进去，大量请求超时。"),
                       ("assistant", "Check for a long lock."),
                       ("user", "是一个没加 CONCURRENTLY 的建索引语句锁表了，"
                                "先 pg_cancel_backend 把它取消了，写入马上恢复。"))
    assert any(c.type == "gotcha" and any(cl.text.startswith("修复：") and "pg_cancel_backend" in cl.text
                                          for cl in c.claims) for c in result.cards), \
        [(c.type, [cl.text for cl in c.claims]) for c in result.cards]


# -- a cause said outright, what a failing system does every time, options raised -----------

def test_a_cause_said_outright_is_no_order_whatever_every_time_it_holds() -> None:
    text = "罪魁祸首就是每次重试都新建一个连接池，旧的从来不关，连接数一路涨到上限。"
    assert kinds_of(text) == ["gotcha"]
    assert kinds_of("The root cause is that every time the job retries it opens a new pool "
                    "and never closes the old one.") == ["gotcha"]
    # a cause word inside a list of section names is no cause statement
    assert kinds_of("I'd rather have write-ups in our usual layout: Impact / Trigger / Root cause / Fix.") \
        != ["gotcha"]


def test_what_a_failing_system_does_every_time_orders_nothing() -> None:
    assert directive("再加上缓存没命中，每次都回源拉全量，加起来就超时了。") is None
    assert directive("每次发版都要先跑冒烟测试，不然容易失败。") == "instruction"
    # 怪不得 is "no wonder", not a prohibition
    assert directive("高峰期一半请求被限流，怪不得延迟涨得这么快。") is None


def test_dropping_one_option_for_another_is_a_decision_and_a_proposal_is_none() -> None:
    assert kinds_of("扣库存那块不上分布式锁，直接用数据库乐观锁，锁续期出问题反而更麻烦。") == ["decision"]
    assert "decision" not in kinds_of("有人提议直接上 Kafka 做事件总线，我觉得现在没必要。")
    assert "decision" not in kinds_of("Someone proposed moving everything to Kafka last week.")


@pytest.mark.parametrize("problem,fix", [
    ("terraform plan fails with a state lock error.", "Force-unlocked after a backup, and the plan runs again."),
    ("pip install fails on the private git dependency.",
     "Added the insteadOf rule with a read-only token and the install goes through."),
])
def test_it_runs_again_confirms_the_fix(problem: str, fix: str) -> None:
    result = distilled(("user", problem), ("assistant", "Try that."), ("user", fix))
    assert any(c.type == "gotcha" and any(cl.text.startswith("Fix: ") for cl in c.claims)
               for c in result.cards), [(c.type, [cl.text for cl in c.claims]) for c in result.cards]


def test_everything_goes_through_a_tool_is_no_fix() -> None:
    kinds = kinds_of("Please don't put global installs in the docs; everything goes through `uv run`.")
    assert "fix" not in kinds and "preference" in kinds


def test_a_three_part_hyphenated_name_is_an_identifier() -> None:
    from vault_engine.text.entities import is_identifier

    assert is_identifier("risk-feature-agg") and is_identifier("fx-gateway")
    assert not is_identifier("end-to-end") and not is_identifier("state-of-the-art")
    assert not is_identifier("follow-up") and not is_identifier("on-call")
