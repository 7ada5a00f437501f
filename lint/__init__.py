"""Rules over the parsed vault that return findings (code, severity, path, line, message, fix).

    report = run_lint(vault)              # rules and severities from alaya.toml [lint]
    report.findings, report.summary, report.errors
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vault_engine.errors import UsageError
from vault_engine.store.vault import Vault

from .rules import RULES, Finding, LintContext

SEVERITIES = ("error", "warning")


@dataclass(frozen=True)
class LintReport:
    findings: list[Finding]
    rules: list[str]  # the codes that ran

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    @property
    def summary(self) -> dict[str, object]:
        by_code: dict[str, int] = {}
        for f in self.findings:
            by_code[f.code] = by_code.get(f.code, 0) + 1
        return {"errors": self.errors, "warnings": self.warnings,
                "files": len({f.path for f in self.findings}),
                "by_code": dict(sorted(by_code.items())), "rules": len(self.rules)}

    def as_dict(self) -> dict[str, object]:
        return {"findings": [f.as_dict() for f in self.findings], "summary": self.summary}


def _check_codes(codes: Iterable[str], where: str) -> list[str]:
    out = []
    for code in codes:
        if code not in RULES:
            raise UsageError(f"unknown lint rule {code!r} in {where}",
                             fix="see `alaya lint --list` for the codes")
        out.append(code)
    return out


def run_lint(vault: Vault, *, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> LintReport:
    cfg = vault.config.section("lint")
    chosen = _check_codes(select, "--select") or _check_codes(cfg["select"], "[lint] select")
    dropped = set(_check_codes(ignore, "--ignore")) | set(_check_codes(cfg["ignore"],
                                                                       "[lint] ignore"))
    severity = dict(cfg["severity"])
    for code, level in severity.items():
        _check_codes([code], "[lint] severity")
        if level not in SEVERITIES:
            raise UsageError(f"[lint] severity for {code!r} is {level!r}",
                             fix='use "error" or "warning"')
    active = {c for c in (chosen or RULES) if c not in dropped}
    ctx = LintContext(vault=vault, index=vault.load(), stale_days=int(cfg["stale_days"]),
                      low_confidence=float(cfg["low_confidence"]),
                      budget_chars=int(vault.config.get("memory", "budget_chars")))

    def emit(code: str, path: str, line: int | None, message: str, fix: str) -> Finding:
        return Finding(code=code, severity=severity.get(code, RULES[code].severity), path=path,
                       line=line or None, message=message, fix=fix)

    findings: list[Finding] = []
    seen: set[tuple[str, str, int | None, str]] = set()
    for info in RULES.values():
        if info.check is None:
            continue
        # a check emits several codes: run it when any of them is active
        family = {info.code} | {c for c, i in RULES.items() if i.check is None
                                and _owner(c) == info.code}
        if not family & active:
            continue
        for f in info.check(ctx, emit):
            key = (f.code, f.path, f.line, f.message)
            if f.code in active and key not in seen:
                seen.add(key)
                findings.append(f)
    findings.sort(key=lambda f: (f.path, f.line or 0, f.code))
    return LintReport(findings=findings, rules=sorted(active))


def public_report(vault: Vault, report: LintReport, *, select: Sequence[str] = (),
                  ignore: Sequence[str] = ()) -> LintReport:
    """The findings reports/lint.md may hold: those of the notes every reader sees (`shared`),
    found without looking at any private note — so a finding's message never names one.
    Reuses `report` when the caller's view already is that."""
    from vault_engine.store.namespaces import Caller

    public = Caller.public()
    index = vault.load()
    if all(public.sees(n) for n in index.notes) and not index.hidden:
        return report
    return run_lint(vault.as_caller(public), select=select, ignore=ignore)


def _owner(code: str) -> str:
    """The rule whose check emits `code` (codes registered with `also=`)."""
    from .rules import OWNERS

    return OWNERS.get(code, code)
