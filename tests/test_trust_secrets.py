"""Secrets are never stored and never served (issue #13): a plain ingest, capture and MCP
ingest redact every kind — keys, tokens, PEM blocks, and passwords said in English or
Chinese — from the note, the raw file and git; a secret someone types into a note by hand is
masked in recall, context, show and MCP, and lint names it."""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from vault_engine.text.secrets import find_secrets, redact, redact_input

from .test_agents import mcp_session, payload

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT / "benchmarks" / "zh" / "dev"


def rnd(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 0) -> str:
    r = random.Random(n * 7919 + seed)
    return "".join(r.choice(alphabet) for _ in range(n))


UP = string.ascii_uppercase + string.digits
SECRETS = {
    "openai": "sk-" + rnd(48),
    "openai-project": "sk-proj-" + rnd(40, seed=1) + "T3BlbkFJ" + rnd(40, seed=2),
    "aws-key-id": "AKIA" + rnd(16, UP),
    "aws-secret": rnd(40, seed=3),
    "github-classic": "ghp_" + rnd(36, seed=4),
    "github-fine": "github_pat_" + rnd(22, seed=5) + "_" + rnd(59, seed=6),
    "slack": "xoxb-" + rnd(12, string.digits) + "-" + rnd(13, string.digits) + "-" + rnd(24),
    "jwt": "eyJhbGciOiJIUzI1NiJ9." + rnd(60, seed=7) + "." + rnd(43, seed=8),
    "pem": "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rnd(64, seed=i) for i in range(4))
           + "\n-----END RSA PRIVATE KEY-----",
    "password-en": "Tr0ub4dor&3x",
    "password-zh": "Xk9#mP2vQ7",
    "token-phrase": rnd(32, seed=9),
}

SESSION = {"id": "session-keys", "timestamp": 1775000000000, "turns": [
    {"role": "user", "content": f"Our OpenAI key is {SECRETS['openai']} and the project key "
                                f"{SECRETS['openai-project']}."},
    {"role": "assistant", "content": "Please rotate both; never paste keys into chat."},
    {"role": "user", "content": "terraform output:\n```\n{\n  \"access_key_id\": "
                                f"\"{SECRETS['aws-key-id']}\",\n  \"secret_access_key\": "
                                f"\"{SECRETS['aws-secret']}\"\n}}\n```"},
    {"role": "user", "content": f"GITHUB_TOKEN 配的是 {SECRETS['github-classic']}，新的 "
                                f"fine-grained token 是 {SECRETS['github-fine']}"},
    {"role": "user", "content": f"export SLACK_BOT_TOKEN={SECRETS['slack']}\ncurl -H "
                                f"'Authorization: Bearer {SECRETS['jwt']}' https://api"},
    {"role": "user", "content": f"the maintenance key:\n{SECRETS['pem']}"},
    {"role": "user", "content": f"The db password is {SECRETS['password-en']} by the way, the "
                                "deploy gotcha: restarting the gateway drops Telegram notices."},
    {"role": "user", "content": f"数据库密码是 {SECRETS['password-zh']}，你帮我把 userlist.txt "
                                f"生成一下。Grafana 的 token: {SECRETS['token-phrase']}"},
    {"role": "assistant", "content": "已生成。建议把密码放进 Vault，不要写明文。"},
]}


def alaya(vault: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)


def leaks(text: str) -> list[str]:
    """Which secret values (or a long piece of one) appear in `text`."""
    found = []
    for name, value in SECRETS.items():
        pieces = [value] if len(value) < 16 else [value[i:i + 12] for i in
                                                   range(0, len(value) - 12, 6)]
        if any(p in text for p in pieces if p.strip()):
            found.append(name)
    return found


def tree_text(vault: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in vault.rglob("*")
                     if p.is_file() and ".git" not in p.parts)


def test_every_kind_is_found_in_english_and_chinese() -> None:
    for name, value in SECRETS.items():
        hidden = redact(json.dumps(SESSION, ensure_ascii=False))
        assert value not in hidden, name
    assert not find_secrets("the password is stored in Vault, 密码是否正确，token 过期了")
    assert not find_secrets("raw_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d"
                            "6c15b0f00a08 and password = os.environ['DB_PASSWORD']")


def test_the_planted_chinese_dev_secrets_are_all_redacted() -> None:
    """benchmarks/zh dev set: every planted secret of every kind is gone after redaction
    (held-out numbers: benchmarks/trust_zh.py, reported once in docs/benchmarks.md)."""
    planted = json.loads((DEV / "secrets.json").read_text(encoding="utf-8"))
    for s in planted:
        data = (DEV / "sessions" / f"{s['session']}.json").read_bytes()
        turn = json.loads(redact_input(data))["turns"][s["turn"] - 1]["content"]
        assert s["value"] not in turn and "[REDACTED:" in turn, s["kind"]


def test_plain_ingest_distill_compile_leaves_no_secret_anywhere(
        vault_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    v = vault_path
    src = tmp_path / "session-keys.json"
    src.write_text(json.dumps(SESSION, ensure_ascii=False, indent=1), encoding="utf-8")
    assert alaya(v, "ingest", str(src)).exit_code == 0
    # capture from a growing file, capture from stdin, and MCP ingest: the same guard
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n"
                                  for t in SESSION["turns"]), encoding="utf-8")
    assert alaya(v, "capture", str(transcript), "--session", "chat-file").exit_code == 0
    assert alaya(v, "capture", "-", "--session", "chat-stdin",
                 input=transcript.read_text()).exit_code == 0
    _, results = mcp_session(v, [("ingest", {"session": dict(SESSION, id="session-mcp")})])
    assert not results[0].is_error, results[0]
    assert alaya(v, "distill").exit_code == 0
    assert alaya(v, "compile").exit_code == 0
    note = next((v / "sessions").rglob("session-keys.md")).read_text()
    assert "[REDACTED:" in note and "restarting the gateway drops Telegram" in note
    raw = json.loads(next((v / "sessions").rglob("session-keys.json")).read_text())
    assert len(raw["turns"]) == len(SESSION["turns"])  # the raw file still parses
    assert alaya(v, "lint", "--select", "session-tampered", "--no-report").exit_code == 0
    assert leaks(tree_text(v)) == []  # the working tree, .alaya/ included
    history = git.Repo(v).git.log("-p", "--all")
    assert "ingest:" in history and leaks(history) == []
    cards = [p for p in (v / "cards").rglob("*.md")]
    assert cards  # distill made cards (the gateway gotcha at least)
    outputs = [alaya(v, "recall", q, "--json").output for q in
               ("openai key", "aws secret access key", "db password", "数据库密码", "token")]
    outputs.append(alaya(v, "context", "--query", "database password token").output)
    outputs += [alaya(v, "show", p.stem, "--json").output for p in cards]
    outputs.append(alaya(v, "show", "session-keys").output)
    for out in outputs:
        assert leaks(out) == [], out[:300]


def test_no_redact_keeps_them(vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"id": "s-plain", "turns": [
        {"role": "user", "content": f"key {SECRETS['openai']}"}]}), encoding="utf-8")
    assert alaya(vault_path, "ingest", str(src), "--no-redact").exit_code == 0
    assert SECRETS["openai"] in next((vault_path / "sessions").rglob("s-plain.md")).read_text()


def test_a_secret_written_by_hand_is_masked_wherever_it_is_served(
        vault_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")
    v = vault_path
    card = v / "cards" / "fact" / "Payment service access.md"
    card.parent.mkdir(parents=True, exist_ok=True)
    card.write_text("---\nid: card-pay\ntitle: Payment service access\ntype: fact\nclaims:\n"
                    f"  - {{id: c1, text: 'The payment API key is {SECRETS['openai']}'}}\n"
                    "---\n"
                    f"Login: the admin password is {SECRETS['password-en']}; 初始密码 "
                    f"{SECRETS['password-zh']}.\n", encoding="utf-8")
    persona = v / "persona.md"
    persona.write_text(persona.read_text() + f"\n- the staging token: {SECRETS['token-phrase']}\n")
    assert alaya(v, "compile").exit_code == 0
    outputs = [alaya(v, "recall", "payment API key", "--json").output,
               alaya(v, "recall", "payment", "--format", "prompt").output,
               alaya(v, "context", "--query", "payment admin password", "--json").output,
               alaya(v, "show", "card-pay").output, alaya(v, "show", "card-pay", "--json").output,
               alaya(v, "show", "card-pay", "--raw").output]
    _, results = mcp_session(v, [("get", {"ref": "card-pay"}),
                                 ("recall", {"query": "payment API key"}),
                                 ("context", {"query": "payment admin password"})])
    outputs += [json.dumps(payload(r), ensure_ascii=False) for r in results]
    for out in outputs:
        assert leaks(out) == [], out[:400]
    assert "REDACTED" in outputs[3]
    lint = json.loads(alaya(v, "lint", "--format", "json", "--no-report",
                            "--select", "secret-detected").output)
    lines = {(f["path"], f["line"]) for f in lint["findings"]}
    assert ("cards/fact/Payment service access.md", 6) in lines  # the claim's line
    assert ("cards/fact/Payment service access.md", 8) in lines  # the body's
    assert any(p == "persona.md" for p, _ in lines)
    assert card.read_text().count(SECRETS["openai"]) == 1  # a person's text is never rewritten


def test_the_installed_alaya_redacts_by_default(vault_path: Path, tmp_path: Path) -> None:
    src = tmp_path / "s.json"
    src.write_text(json.dumps({"id": "s-cli", "turns": [
        {"role": "user", "content": f"数据库密码是 {SECRETS['password-zh']}"}]},
        ensure_ascii=False), encoding="utf-8")
    alaya_bin = str(Path(sys.executable).parent / "alaya")
    done = subprocess.run([alaya_bin, "--vault", str(vault_path), "ingest", str(src), "--json"],
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["commit"]
    assert leaks(tree_text(vault_path)) == []


def test_a_dollar_inside_a_password_and_a_basic_auth_header() -> None:
    """A `$` inside a word is a symbol of the password, not a shell variable; an HTTP Basic
    header is found when its value decodes to user:password."""
    import base64

    header = base64.b64encode(b"deploy:Wq7#pLz2026").decode()
    text = (f"数据库 admin 密码是 Pg$Adm1n#2026，然后 curl -H 'Authorization: Basic {header}' "
            "http://10.0.0.5:9200/_cat/indices")
    hidden = redact(text)
    assert "Pg$Adm1n#2026" not in hidden and header not in hidden
    for harmless in ("the password is $DB_PASS", "password: ${VAULT_SECRET}",
                     "basic auth is enabled on the ingress", "Authorization: Basic realm"):
        assert not find_secrets(harmless), harmless


def test_secrets_inside_a_blob_are_found_and_a_huge_blob_is_cheap() -> None:
    """A minified line tens of kilobytes long still gives up its password and its key; a
    blob with no credential marker in it is not scanned pattern by pattern."""
    filler = ",".join(f'"k{i}":"v{i}"' for i in range(3000))
    key = "sk-proj-" + rnd(40, seed=7)
    line = '{' + filler + ',"db_password":"Zq9!mR2#vL7x",' + filler + f',"openai":"{key}"' + '}'
    assert len(line) > 40_000 and " " not in line
    hidden = redact(line)
    assert "Zq9!mR2#vL7x" not in hidden and key not in hidden
    blob = "A" * 3_000_000
    assert find_secrets(blob) == [] and redact(blob) == blob
