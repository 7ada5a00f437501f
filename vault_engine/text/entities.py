"""Entities named in text — systems, time zones, identifiers, people — and one name for each.

- **Time zones** stay whole: `Asia/Shanghai`, `America/New_York` (every IANA name) are one
  entity, never "Asia" and "Shanghai".
- **Aliases** fold to one name: k8s / K8s / kubernetes → Kubernetes; pg / Postgres / postgresql
  → PostgreSQL; es → Elasticsearch; and the usual spellings of common tools (gitlab → GitLab,
  argocd → Argo CD). Versions stay with their system when they are written together (PG16, PG 16,
  Postgres 16 → PostgreSQL 16).
- **Identifiers** stay whole: hyphenated and underscored service, host and table names
  (`payment-svc`, `db-replica-2`, `redis-cache-01`, `orders_archive`), dotted config keys
  (`plugins.allow`, `spring.servlet.multipart.max-file-size`), CamelCase and ACRONYMS.
  Hyphenated English words (follow-up, long-term, re-run) are not identifiers.
- **One key** to compare two names by (`subject_key`): `dwd.user_events`, `dwd_user_events`
  and `DWD-User-Events` are one subject, k8s and Kubernetes another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

ALIASES: dict[str, str] = {
    "k8s": "Kubernetes", "kubernetes": "Kubernetes", "kube": "Kubernetes",
    "pg": "PostgreSQL", "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "psql": "PostgreSQL",
    "mysql": "MySQL", "redis": "Redis", "kafka": "Kafka", "es": "Elasticsearch",
    "elasticsearch": "Elasticsearch", "mongo": "MongoDB", "mongodb": "MongoDB",
    "gitlab": "GitLab", "github": "GitHub", "argocd": "Argo CD", "argo cd": "Argo CD",
    "argo rollouts": "Argo Rollouts", "pgbouncer": "PgBouncer", "nginx": "NGINX",
    "ingress-nginx": "ingress-nginx", "prometheus": "Prometheus", "grafana": "Grafana",
    "alertmanager": "Alertmanager", "pagerduty": "PagerDuty", "slack": "Slack", "feishu": "Feishu",
    "飞书": "Feishu", "terraform": "Terraform", "helm": "Helm", "docker": "Docker",
    "s3": "S3", "aws": "AWS", "gcp": "GCP", "jenkins": "Jenkins", "golang": "Go",
    "clickhouse": "ClickHouse", "rabbitmq": "RabbitMQ", "zookeeper": "ZooKeeper",
}
_VERSIONED_RE = re.compile(r"(?i)\b(pg|postgres(?:ql)?|mysql|redis|kafka|python|go|java|node)"
                           r"\s?(\d{1,2}(?:\.\d+)?)\b")
_TZ_RE = re.compile(r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|"
                    r"Pacific|Etc)/[A-Za-z_]+(?:/[A-Za-z_]+)?\b")
_IDENT_RE = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w-])")
_DOTTED_RE = re.compile(r"(?<![\w.])[a-z][a-z_]*(?:\.[a-z][a-z_-]*)+(?![\w.])")
_TECH_RE = re.compile(r"\b(?:[A-Z][a-z]+[A-Z]\w+|[A-Z]{2,}[a-z0-9]*(?:\s+[A-Z]{2,}[a-z0-9]*)*)\b")
PREFIXES = frozenset("a e x re co de un in pre pro non sub self well ex anti auto multi".split())
# hyphenated English words, not identifiers
COMMON_HYPHENATED = frozenset("""dry-run follow-up long-term short-term re-run on-call real-time
read-only read-write built-in opt-in opt-out check-in sign-in log-in set-up hands-on one-off
end-to-end up-to-date fine-grained self-hosted multi-tenant red-eye red-eyes day-to-day
write-ahead back-end front-end open-source high-availability rate-limit pre-approved
per-service""".split())
STOP_TECH = frozenset("""OK OKR TL DR UTC GMT CPU RAM MB GB TB KB API URL SQL HTTP HTTPS JSON YAML
CLI MR PR CI CD ID IDS AI PDF SRE DB QA UI UX IO OS VPN OTP CNY USD FYI ETA TODO PM AM IP ACK
P0 P1 P2 P3 RSS TTL SMS HR""".split())


@dataclass(frozen=True)
class Entity:
    name: str  # the one name
    surface: str  # as written
    kind: str  # system | timezone | identifier | topic


def is_identifier(name: str) -> bool:
    """db-primary, orders_archive, worker-3, k8s-node — not follow-up or re-run."""
    if name.lower() in COMMON_HYPHENATED:
        return False
    if "_" in name or any(ch.isdigit() for ch in name):
        return True
    first = re.split(r"[-_]", name, maxsplit=1)[0]
    parts = name.lower().split("-")
    if len(parts) >= 3 and not _LINKING_WORDS & set(parts):
        return True  # risk-feature-agg, order-list-api — not end-to-end, state-of-the-art
    return len(first) <= 3 and first not in PREFIXES or name.endswith(_SERVICE_SUFFIXES)


_LINKING_WORDS = frozenset("of the to on in and a an by for at or as per".split())
_SERVICE_SUFFIXES = ("-svc", "-service", "-db", "-api", "-bot", "-nginx", "-agg", "-job", "-worker",
                     "-gateway", "-proxy", "-cron", "-etl", "-sdk", "-cli", "-web", "-console")


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    from zoneinfo import available_timezones

    return frozenset(available_timezones())


def canonical(name: str) -> str:
    """The one name of an entity: aliases folded, versions kept ("PG 16" → "PostgreSQL 16")."""
    name = name.strip()
    m = _VERSIONED_RE.fullmatch(name)
    if m:
        base = ALIASES.get(m.group(1).lower(), m.group(1))
        return f"{base} {m.group(2)}"
    return ALIASES.get(name.lower(), name)


def find_entities(text: str) -> list[Entity]:
    """Entities in `text`, in order, each once (by its one name)."""
    found: list[tuple[int, Entity]] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, surface: str, kind: str) -> None:
        if any(a < end and start < b for a, b in taken):
            return
        taken.append((start, end))
        found.append((start, Entity(canonical(surface), surface, kind)))

    for m in _TZ_RE.finditer(text):
        if m.group(0) in _zones():
            add(m.start(), m.end(), m.group(0), "timezone")
    for m in _VERSIONED_RE.finditer(text):
        add(m.start(), m.end(), m.group(0), "system")
    lowered = text.lower()
    for alias in sorted(ALIASES, key=len, reverse=True):
        for m in re.finditer(rf"(?<![\w.-]){re.escape(alias)}(?![\w-])", lowered):
            add(m.start(), m.end(), text[m.start():m.end()], "system")
    for m in _IDENT_RE.finditer(text):
        if is_identifier(m.group(0)):
            add(m.start(), m.end(), m.group(0), "identifier")
    for m in _DOTTED_RE.finditer(text):
        if not re.fullmatch(r"(?:e\.g|i\.e|etc)\.?", m.group(0)):
            add(m.start(), m.end(), m.group(0), "identifier")
    for m in _TECH_RE.finditer(text):
        if m.group(0) not in STOP_TECH and len(m.group(0)) >= 3:
            add(m.start(), m.end(), m.group(0), "system")
    seen: set[str] = set()
    out = []
    for _, ent in sorted(found, key=lambda x: x[0]):
        if ent.name.casefold() not in seen:
            seen.add(ent.name.casefold())
            out.append(ent)
    return out


# Parts of a system people name in lower case ("the connection pool", "the renewal job", "the
# auth endpoint", 连接池, 支付服务): a head noun of ops and software, with one modifier.
COMPONENT_HEADS_EN = frozenset("""pool queue endpoint job service server cluster database replica
cache bucket certificate cert exporter importer pipeline gateway worker proxy balancer broker
stream consumer producer cron index table disk volume backup api app tier token policy
dashboard scheduler daemon runner registry repository repo bot webhook""".split())
_NOT_MODIFIERS = frozenset("""the a an our their my your his her its this that these those new
old same other every each first last next main big small whole entire current whole any some
no all both one two three which what failed broken bad good own whose same such only more
most many few late early real actual default extra awesome great amazing nice cool fantastic
wonderful dream perfect excellent fun hard tough easy full-time part-time day night""".split())
_COMPONENT_EN_RE = re.compile(
    r"(?i)\b([a-z][a-z0-9-]{1,})\s+(" + "|".join(sorted(COMPONENT_HEADS_EN, key=len,
                                                        reverse=True)) + r")(e?s)?\b")
COMPONENT_HEADS_ZH = ("连接池", "数据库", "存储桶", "负载均衡", "队列", "服务", "集群", "网关", "证书",
                      "节点", "缓存", "接口", "实例", "副本", "主库", "从库", "容器", "磁盘", "脚本",
                      "索引", "令牌", "定时任务", "任务", "机器人")


def find_components(text: str) -> list[str]:
    """System parts named in lower case, each once, in one form: "connection pool", "renewal
    job", "auth endpoint", "email worker" (plural folded), 连接池, 支付服务, 证书续期任务."""
    from vault_engine.text.tokens import _stopwords

    stop = _stopwords()
    out: list[str] = []
    for m in _COMPONENT_EN_RE.finditer(text):
        modifier, head = m.group(1).lower(), m.group(2).lower()
        if modifier in _NOT_MODIFIERS or modifier in stop or modifier.endswith(("ly", "ing", "ed"))\
                or modifier in COMPONENT_HEADS_EN or m.group(1)[0].isupper() \
                and m.start() > 0 and not re.search(r"[.!?]\s*$", text[:m.start()]):
            continue  # "Redis cache": the system is the entity, not its cache
        name = f"{modifier} {head}"
        if name not in out:
            out.append(name)
    if re.search(r"[\u4e00-\u9fff]", text):
        from vault_engine.text.words import han_words

        for run in re.findall(r"[\u4e00-\u9fff]+", text):
            words = han_words(run)
            for i, word in enumerate(words):
                head = next((h for h in COMPONENT_HEADS_ZH if word.endswith(h)), None)
                if head is None:
                    continue
                if len(word) >= 3 and (len(word) > len(head) or len(head) >= 3):
                    name = word  # 连接池, 数据库, 支付服务器: a term of its own
                elif i > 0 and len(words[i - 1]) >= 2 and words[i - 1] not in _ZH_NOT_MODIFIERS:
                    name = words[i - 1] + word
                else:
                    continue
                if name not in out:
                    out.append(name)
    return out


_ZH_NOT_MODIFIERS = frozenset("""这个 那个 一个 我们 你们 他们 所有 整个 新的 旧的 这些 那些 每个 其他
相关 对应 现在 目前 已经 还是 就是 一下 没有 可以 需要 应该 如果 因为 所以 然后 这边 那边""".split())


def normalise_terms(text: str) -> str:
    """`text` with every alias written as its one name, so two spellings of one thing share
    their words (used to compare claims: "PG 16 升级" and "Postgres 16 upgrade")."""
    out = _VERSIONED_RE.sub(lambda m: canonical(m.group(0)), text)
    for alias, name in sorted(ALIASES.items(), key=lambda x: -len(x[0])):
        if alias != name.lower():
            out = re.sub(rf"(?i)(?<![\w.-]){re.escape(alias)}(?![\w-])", name, out)
    return out


def subject_key(name: str) -> str:
    """One form of a name to compare subjects by: its one name (aliases folded), case folded,
    and hyphens, underscores, dots, slashes and spaces alike — `dwd.user_events`,
    `dwd_user_events` and `DWD-User-Events` are one; k8s and Kubernetes are one."""
    return re.sub(r"[\s_.\-/]+", "_", canonical(name).casefold()).strip("_")
