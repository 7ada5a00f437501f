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
    return len(first) <= 3 and first not in PREFIXES or name.endswith(("-svc", "-service", "-db",
                                                                        "-api", "-bot", "-nginx"))


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


def normalise_terms(text: str) -> str:
    """`text` with every alias written as its one name, so two spellings of one thing share
    their words (used to compare claims: "PG 16 升级" and "Postgres 16 upgrade")."""
    out = _VERSIONED_RE.sub(lambda m: canonical(m.group(0)), text)
    for alias, name in sorted(ALIASES.items(), key=lambda x: -len(x[0])):
        if alias != name.lower():
            out = re.sub(rf"(?i)(?<![\w.-]){re.escape(alias)}(?![\w-])", name, out)
    return out
