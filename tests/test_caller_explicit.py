"""The caller is resolved once, at each entry point, and handed down (issue 25, build 1):

- nothing in vault_engine/, compilers/ or lint/ reads `ALAYA_AGENT` (or calls the entry
  points' `Caller.resolve`), and nothing anywhere writes it into `os.environ`;
- every call in the product code to a function that acts for a caller — opening a vault,
  recall, traverse, status, schema, export, doctor — passes one (`caller=…`, or the vault's
  own third argument), so no door falls back to the owner by omission.

Each checker also runs on a small planted tree, so a rule that cannot fail is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ("vault_engine", "compilers", "lint")
PRODUCT = (*ENGINE, "cli")
# function name → positional index at which its caller may be given (None: keyword only)
ACTS_FOR = {"Vault": 2, "open": 1, "recall": None, "recall_in_vault": None, "find_paths": None,
            "neighbourhood": None, "status": None, "schema_relations": 1,
            "schema_node_types": 1, "export": None, "visible_digest": 1, "diagnose": 1,
            "repair": 1}
# calls of these names that are not the ones above (another module's function of the name)
NOT_CALLER = {"status": ("history", "repo", "git"), "open": ("os", "io", "builtins"),
              "export": ()}


def _name(call: ast.Call) -> tuple[str, str]:
    f = call.func
    if isinstance(f, ast.Name):
        return "", f.id
    if isinstance(f, ast.Attribute):
        base = f.value
        owner = base.id if isinstance(base, ast.Name) else (
            base.attr if isinstance(base, ast.Attribute) else "")
        return owner, f.attr
    return "", ""


def missing_callers(root: Path, packages: tuple[str, ...]) -> list[str]:
    out = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            aliases = {a.asname or a.name: a.name for n in ast.walk(tree)
                       if isinstance(n, ast.ImportFrom) and (n.level or (n.module and (
                           "vault_engine" in n.module or "compilers" in n.module)))
                       for a in n.names}
            imported = set(aliases)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                owner, name = _name(node)
                if not owner and name in aliases:
                    name = aliases[name]
                if name not in ACTS_FOR:
                    continue
                if name == "open" and owner != "Vault":
                    continue
                if name == "Vault" and owner:
                    continue
                if name not in ("open", "Vault") and not owner and not (
                        name in imported or name in aliases.values()):
                    continue  # a local function of the same name
                if owner in NOT_CALLER.get(name, ()) or (owner and name not in ("open",)
                                                          and owner not in ("A", "status_mod")
                                                          and name in ("status", "export")):
                    continue
                pos = ACTS_FOR[name]
                if any(k.arg == "caller" for k in node.keywords):
                    continue
                if pos is not None and len(node.args) > pos:
                    continue
                rel = path.relative_to(root).as_posix()
                out.append(f"{rel}:{node.lineno}: {owner + '.' if owner else ''}{name}(…) "
                           "without its caller")
    return out


def environment_readers(root: Path, packages: tuple[str, ...]) -> list[str]:
    out = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
            rel = path.relative_to(root).as_posix()
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and _name(node)[1] in ("resolve", "from_env") \
                        and _name(node)[0] == "Caller" and package in ENGINE:
                    out.append(f"{rel}:{node.lineno}: Caller.{_name(node)[1]} in the engine")
                if isinstance(node, ast.Constant) and node.value == "ALAYA_AGENT" \
                        and package in ENGINE and not rel.endswith("config.py"):
                    out.append(f"{rel}:{node.lineno}: reads ALAYA_AGENT")
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                        and isinstance(node.value, ast.Attribute) \
                        and node.value.attr == "environ" and isinstance(node.slice, (
                            ast.Constant, ast.Name)) and (
                        getattr(node.slice, "value", None) == "ALAYA_AGENT"
                        or getattr(node.slice, "id", None) == "AGENT_ENV"):
                    out.append(f"{rel}:{node.lineno}: writes ALAYA_AGENT into os.environ")
    return out


def test_no_engine_code_reads_the_agent_from_the_environment() -> None:
    assert environment_readers(ROOT, PRODUCT) == []


def test_every_door_passes_its_caller() -> None:
    assert missing_callers(ROOT, PRODUCT) == []


def test_the_checkers_catch_planted_violations(tmp_path: Path) -> None:
    pkg = tmp_path / "vault_engine"
    pkg.mkdir()
    (pkg / "bad.py").write_text(
        "import os\n"
        "from vault_engine.recall.pipeline import recall\n"
        "from vault_engine.store.vault import Vault\n"
        "def f(root, q):\n"
        "    v = Vault.open(root)\n"
        "    os.environ['ALAYA_AGENT'] = 'x'\n"
        "    who = os.environ.get('ALAYA_AGENT')\n"
        "    return recall(v.state_dir, q)\n")
    (pkg / "good.py").write_text(
        "from vault_engine.recall.pipeline import recall\n"
        "from vault_engine.store.vault import Vault\n"
        "def f(root, q, c):\n"
        "    v = Vault.open(root, caller=c)\n"
        "    return recall(v.state_dir, q, caller=v.caller)\n")
    missing = missing_callers(tmp_path, ("vault_engine",))
    assert missing == ["vault_engine/bad.py:5: Vault.open(…) without its caller",
                       "vault_engine/bad.py:8: recall(…) without its caller"]
    readers = environment_readers(tmp_path, ("vault_engine",))
    assert any("writes ALAYA_AGENT" in r for r in readers)
    assert any("reads ALAYA_AGENT" in r for r in readers)


# store may not import text (docs/architecture.md), so the injection gate for what an agent
# writes into `shared` is handed in: every product call of these passes it
GATED = {"create_card", "link", "promote_shared"}


def ungated(root: Path, packages: tuple[str, ...]) -> list[str]:
    out = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                owner, name = _name(node)
                if name in GATED and owner in ("card_ops", "cards", "") and \
                        not any(k.arg == "screen" for k in node.keywords):
                    if owner == "" and name == "link":
                        continue  # a local link() of another module
                    out.append(f"{path.relative_to(root).as_posix()}:{node.lineno}: {name}(…) "
                               "without the injection screen")
    return out


def test_every_agent_write_into_shared_passes_the_injection_screen() -> None:
    assert ungated(ROOT, ("cli", "compilers")) == []


def test_the_screen_checker_catches_a_planted_call(tmp_path: Path) -> None:
    pkg = tmp_path / "cli"
    pkg.mkdir()
    (pkg / "bad.py").write_text("def f(v, s):\n    return card_ops.create_card(v, s)\n")
    assert ungated(tmp_path, ("cli",)) == ["cli/bad.py:2: create_card(…) without the injection screen"]
