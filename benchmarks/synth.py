"""Realistic synthetic vault notes (English and Chinese), shared by the benchmarks."""

from __future__ import annotations

import random

WORDS_EN = ("gateway restart telegram notice plugin config deploy rollback cache timeout "
            "retry queue worker database index migration schema token auth proxy latency "
            "memory leak thread lock disk backup cron alert metric log trace").split()
WORDS_ZH = ("网关 重启 通知 插件 配置 部署 回滚 缓存 超时 重试 队列 数据库 索引 迁移 令牌 代理 "
            "延迟 内存 线程 磁盘 备份 告警 日志").split()
TYPES = ("concept", "pattern", "gotcha", "decision", "fact", "preference")
RELS = ("DEPENDS_ON", "CAUSED_BY", "SIMILAR_TO", "RELATES_TO", "TEMPORAL_NEXT", "LED_TO")


def sentence(rng: random.Random, n: int, zh: bool) -> str:
    words = WORDS_ZH if zh else WORDS_EN
    joiner = "" if zh else " "
    text = joiner.join(rng.choice(words) for _ in range(n))
    return text if zh else text.capitalize() + "."


def card_text(i: int, rng: random.Random, n_cards: int) -> tuple[str, str]:
    """(title, full note text) of card i."""
    zh = i % 4 == 3
    title = f"{sentence(rng, 4, zh).rstrip('.')} {i}"
    claims = []
    for c in range(rng.randint(1, 3)):
        claims.append(
            f"  - id: c{c + 1}\n    text: \"{sentence(rng, 12, zh)}\"\n"
            f"    confidence: {rng.randint(5, 99) / 100}\n    status: supported\n"
            f"    evidence:\n      - {{kind: session, source: \"[[session-{i % 500:05d}#^t{c + 1}]]\", "
            f"confidence: 0.8}}\n")
    rels = []
    for _ in range(rng.randint(0, 3)):
        j = rng.randrange(n_cards)
        rels.append(f"  - {{type: {rng.choice(RELS)}, target: \"[[card {j}]]\", weight: "
                    f"{rng.randint(3, 10) / 10}, reason: \"{sentence(rng, 5, zh)}\"}}\n")
    tags = ", ".join(rng.sample(WORDS_EN, 3))
    text = (
        "---\n"
        f"id: card-{i:08x}\n"
        f"title: \"{title}\"\n"
        f"type: {rng.choice(TYPES)}   # assigned by distill\n"
        f"tags: [{tags}]\n"
        f"aliases: ['card {i}']\n"
        "namespace: shared\n"
        f"created: 2026-0{1 + i % 9}-1{i % 9}T06:29:00Z\n"
        f"updated: 2026-0{1 + i % 9}-1{i % 9}T06:29:00Z\n"
        f"importance: {rng.randint(1, 9) / 10}\n"
        "pinned: false\n"
        f"source_sessions: [\"[[session-{i % 500:05d}]]\"]\n"
        f"claims:\n{''.join(claims)}"
        + (f"relations:\n{''.join(rels)}" if rels else "relations: []\n")
        + "---\n"
        + "\n\n".join(sentence(rng, rng.randint(15, 40), zh) for _ in range(rng.randint(1, 4)))
        + f"\n\nSee [[card {rng.randrange(n_cards)}]].\n"
    )
    return title, text


def cards(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [card_text(i, rng, n)[1] for i in range(n)]


def session_text(s: int, rng: random.Random, turns: int = 10) -> str:
    zh = s % 4 == 3
    lines = ["---", f"id: session-{s:05d}", f"title: \"Session {s}\"", "channel: telegram",
             "agent: main", f"started: 2026-03-{1 + s % 28:02d}T06:00:00Z", "---"]
    for t in range(1, turns + 1):
        role, name = ("user", "Alice") if t % 2 else ("assistant", "main")
        lines += [f"> [!{role}] t{t} · {role} · {name} · 2026-03-{1 + s % 28:02d}T06:{t:02d}:00Z",
                  "> " + sentence(rng, rng.randint(8, 30), zh), "", f"^t{t}", ""]
    return "\n".join(lines) + "\n"


def write_vault(root, n_cards: int, seed: int = 7) -> None:  # type: ignore[no-untyped-def]
    """A realistic synthetic vault on disk: n cards (1 in 4 Chinese), n/20 sessions."""
    from pathlib import Path

    from vault_engine.store.ids import safe_filename
    from vault_engine.store.init_vault import template_files

    root = Path(root)
    rng = random.Random(seed)
    for rel, src in template_files():
        dest = root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
    for i in range(n_cards):
        title, text = card_text(i, rng, n_cards)
        ctype = text.split("\ntype: ", 1)[1].split()[0]
        path = root / "cards" / ctype / f"{safe_filename(title)}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for s in range(max(1, n_cards // 20)):
        path = root / "sessions" / "2026-03" / f"session-{s:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(session_text(s, rng), encoding="utf-8")
