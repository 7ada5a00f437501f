"""Every writer passes the one redactor (issue 25, item 3): each attack goes in through the
real door — ingest, capture, `new`, `new -`, `link --reason`, `feedback`, `recall`, MCP — into
a real vault with real git, and no 6-character window of its value is left in any file
(`.alaya/` included), in `git log -p`, or in what the command printed."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import cli

from .test_agents import mcp_session


def alaya(vault: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault), *args], input=input)


def windows(value: str) -> set[str]:
    return {value[i:i + 6] for i in range(len(value) - 5)}


def everywhere(vault: Path) -> str:
    files = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in vault.rglob("*")
                      if p.is_file() and ".git" not in p.parts)
    names = "\n".join(str(p.relative_to(vault)) for p in vault.rglob("*") if ".git" not in p.parts)
    return files + names + git.Repo(vault).git.log("-p", "--all", "--text")


def assert_gone(vault: Path, *values: str, outputs: tuple[str, ...] = ()) -> None:
    text = everywhere(vault) + "\n".join(outputs)
    for value in values:
        left = [w for w in windows(value) if w in text]
        assert not left, (value, left)


@pytest.fixture(autouse=True)
def _hash_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAYA_EMBED_PROVIDER", "hash")


def ingest_turns(vault: Path, tmp_path: Path, name: str, turns: list[str]) -> Result:
    src = tmp_path / name
    src.write_text(json.dumps({"id": name.split(".")[0], "timestamp": 1775000000000,
                               "turns": [{"role": "user" if i % 2 == 0 else "assistant",
                                          "content": t} for i, t in enumerate(turns)]},
                              ensure_ascii=False), encoding="utf-8")
    result = alaya(vault, "ingest", str(src))
    assert result.exit_code == 0, result.output
    return result


# -- session content through ingest ---------------------------------------------------------
PHRASES: dict[str, tuple[str, ...]] = {
    "dotenv": ("pasted the env:\nMAILER_HOST=smtp.example.com\nMAILER_PASS=Mq7#vLp2Xw\n"
               "SIGNING_KEY=Sg4Hn7Jk2Lq9\n", "Mq7#vLp2Xw", "Sg4Hn7Jk2Lq9"),
    "fullwidth": ("邮件服务的密码：Wz8！kq3Lm9", "kq3Lm9"),
    "zh-order": ("口令我刚换成 Tq5%ujK2zr 了，别外传", "Tq5%ujK2zr"),
    "value-first": ("Hv6#pLq9Ws — that one is the new staging admin password.", "Hv6#pLq9Ws"),
    "trailing-punct": ("the vpn password is Rk4@mZ8!!", "Rk4@mZ8!!"),
    "mysql": ("ran: mysql -h db -ureport -pSq9#vB2nLk reports", "Sq9#vB2nLk"),
    "redis": ("redis-cli -h cache -a 'Cr3$wE8tYu' info", "Cr3$wE8tYu"),
    "curl-user": ("curl -u deploy:Fx4!gH7jKz https://ci.example.com/api", "Fx4!gH7jKz"),
    "url-at": ("连接串 mongodb://root:Pz7@2026.Qm@db.example.com:27017/app", "Pz7@2026.Qm"),
    "header": ("curl -H 'Cookie: sid=Ck9Lm2Np5Qr8St' https://x.example.com", "Ck9Lm2Np5Qr8St"),
}


@pytest.mark.parametrize("kind", sorted(PHRASES))
def test_ingest_masks_secrets_by_structure(vault_path: Path, tmp_path: Path, kind: str) -> None:
    text, *values = PHRASES[kind]
    ingest_turns(vault_path, tmp_path, f"s-{kind}.json", [text, "noted"])
    assert_gone(vault_path, *values)
    assert "]!!" not in everywhere(vault_path)  # a mask keeps no tail of the value


def test_private_key_continued_in_the_next_turn(vault_path: Path, tmp_path: Path) -> None:
    body = ["MIIEpQIBAAKCAQEAs1Xq9Lm2Zr8Vw4Np7Kt3Yh6Gf5Dc2Bx1Aq9Sz8Rw7Pv6",
            "Ou5Ni4Mh3Lg2Kf1Je0Id9Hc8Gb7Fa6Ez5Dy4Cx3Bw2Av1Zu0Yt9Xs8Wr7Vq6Up",
            "To5Sn4Rm3Ql2Pk1Oj0Ni9Mh8Lg7Kf6Je5Id4Hc3Gb2Fa1Ez0Dy9Cx8Bw7Av6Zu"]
    ingest_turns(vault_path, tmp_path, "s-pem.json", [
        "私钥分两段发，第一段：\n-----BEGIN RSA PRIVATE KEY-----\n" + body[0],
        "收到，第二段呢？",
        "\n".join(body[1:]) + "\n-----END RSA PRIVATE KEY-----"])
    assert_gone(vault_path, *body)


def test_claude_code_tool_call_and_result(vault_path: Path, tmp_path: Path) -> None:
    sid = "5b0c9d1e-2f3a-4b5c-8d7e-6f5a4b3c2d1e"
    rows = [
        {"type": "user", "sessionId": sid, "uuid": "u1", "timestamp": "2026-06-01T09:00:00Z",
         "message": {"role": "user", "content": "the worker can't reach redis, check its secret"}},
        {"type": "assistant", "sessionId": sid, "uuid": "u2", "timestamp": "2026-06-01T09:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_a1", "name": "Bash", "input": {
                 "command": "kubectl get secret redis -o jsonpath='{.data.password}' "
                            "| base64 -d"}}]}},
        {"type": "user", "sessionId": sid, "uuid": "u3", "timestamp": "2026-06-01T09:00:07Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "toolu_a1", "content": "Kz7!mW2qXp5v"}]}},
        {"type": "assistant", "sessionId": sid, "uuid": "u4", "timestamp": "2026-06-01T09:00:09Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "toolu_a2", "name": "Bash", "input": {
                 "command": "redis-cli -h cache -a Rd5#qT8wLz ping"}}]}},
    ]
    src = tmp_path / f"{sid}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = alaya(vault_path, "ingest", str(src), "--format", "claude-code")
    assert result.exit_code == 0, result.output
    assert_gone(vault_path, "Kz7!mW2qXp5v", "Rd5#qT8wLz")


def test_token_in_the_file_name_and_session_key(vault_path: Path, tmp_path: Path) -> None:
    token = "ghp_" + "Qm3Wn8Er5Ty2Ui7Op4As9Df6Gh1Jk0LzXcVb"
    src = tmp_path / f"build-{token}.txt"
    src.write_text("User: the build log got a strange name\nAssistant: rename it\n")
    result = alaya(vault_path, "ingest", str(src), "--format", "transcript")
    assert result.exit_code == 0, result.output
    key = "ci:" + "Zr8Xt5Cv2Bn7Mq4Lw9Kp3Jh6"
    rows = [{"role": "user", "content": "the bot is quiet", "sessionKey": key,
             "timestamp": 1775000000000}]
    (tmp_path / "k.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result2 = alaya(vault_path, "ingest", str(tmp_path / "k.jsonl"))
    assert result2.exit_code == 0, result2.output
    capture = alaya(vault_path, "capture", "-", "--session", "job-Yh4Tg7Rf2Ed9Ws6Qa3Zx",
                    input=json.dumps({"role": "user", "content": "hello"}) + "\n")
    assert capture.exit_code == 0, capture.output
    assert_gone(vault_path, token, "Zr8Xt5Cv2Bn7Mq4Lw9Kp3Jh6", "Yh4Tg7Rf2Ed9Ws6Qa3Zx",
                outputs=(result.output, result2.output))


# -- agent writes ---------------------------------------------------------------------------
def test_agent_writes_pass_the_gateway(vault_path: Path, tmp_path: Path) -> None:
    v = vault_path
    outs = []
    r = alaya(v, "--agent", "ops", "new", "--title", "Mail relay", "--type", "concept",
              "--claim", "the relay login password is Nw6#pQ3zLk now", "--body",
              "SMTP_TOKEN=Bd8Jm4Kr2Vt6Xp9", "--alias", "relay Hx5!kL8qWz password")
    assert r.exit_code == 0, r.output
    outs.append(r.output)
    doc = {"title": "Object storage", "type": "concept",
           "content": "存储桶的访问密钥：Ak7Lp2Qz9Wm4Xs", "claims": ["密钥是 Gq3%vN8kTz"],
           "aliases": ["oss Pj5#tR2wLm 口令"],
           "relations": [{"type": "RELATED_TO", "target": "Mail relay",
                          "reason": "both use password Rl9@xC4vBn"}]}
    r = alaya(v, "--agent", "ops", "new", "-", "--json", input=json.dumps(doc, ensure_ascii=False))
    assert r.exit_code == 0, r.output
    outs.append(r.output)
    r = alaya(v, "--agent", "ops", "new", "--title", "relay key Kt4Wz8Qm2Lx6Vb", "--type",
              "concept")
    assert r.exit_code == 0, r.output
    outs.append(r.output)  # the command does not echo it either
    r = alaya(v, "--agent", "ops", "link", "Mail relay", "Object storage", "--rel",
              "DEPENDS_ON", "--reason", "relay reads the bucket with token Tk2Wq8Zm5Lp7Xc")
    assert r.exit_code == 0, r.output
    outs.append(r.output)
    card = next(p for p in (v / "cards").rglob("*.md") if "Mail relay" in p.read_text())
    card_id = next(line.split(":", 1)[1].strip() for line in card.read_text().splitlines()
                   if line.startswith("id:"))
    r = alaya(v, "--agent", "ops", "feedback", "correct", card_id, "--claim", "c1", "--text",
              "新密码是 Cq4#yH7nWs")
    assert r.exit_code == 0, r.output
    r = alaya(v, "--agent", "ops", "feedback", "useful", card_id, "--reason",
              "it had the token Uf3Kx9Lm2Qw7Zp")
    assert r.exit_code == 0, r.output
    r = alaya(v, "--agent", "ops", "feedback", "deprecate", card_id, "--reason",
              "password rotated, the old one Dp6!wE3rTy is dead")
    assert r.exit_code == 0, r.output
    assert_gone(v, "Nw6#pQ3zLk", "Bd8Jm4Kr2Vt6Xp9", "Hx5!kL8qWz", "Ak7Lp2Qz9Wm4Xs",
                "Gq3%vN8kTz", "Pj5#tR2wLm", "Rl9@xC4vBn", "Tk2Wq8Zm5Lp7Xc", "Cq4#yH7nWs",
                "Uf3Kx9Lm2Qw7Zp", "Dp6!wE3rTy", "Kt4Wz8Qm2Lx6Vb", outputs=tuple(outs))


def test_recall_query_log_and_saved_query(vault_path: Path) -> None:
    v = vault_path
    assert alaya(v, "compile").exit_code == 0
    assert alaya(v, "recall", "my api key is sk-proj-Wq8Zm5Lp7XcRt2Yn6Bv4Ku9Hj3", "--json",
                 ).exit_code == 0
    assert alaya(v, "recall", "数据库密码是 Mk7#qW2zXp 吗", "--save").exit_code == 0
    assert alaya(v, "context", "--query", "token Lz4Qx8Vn2Wk6Rp9").exit_code == 0
    assert_gone(v, "Wq8Zm5Lp7XcRt2Yn6Bv4Ku9Hj3", "Mk7#qW2zXp", "Lz4Qx8Vn2Wk6Rp9")


def test_mcp_writes_pass_the_gateway(vault_path: Path) -> None:
    _, results = mcp_session(vault_path, [
        ("new", {"title": "Queue broker", "type": "concept",
                 "content": "broker admin password: Qb8#nM3vXz",
                 "claims": ["the broker token is Tb5Wq2Zk9Lm4Xp"]}),
        ("recall", {"query": "the password is Rc7!kV2mQz"}),
    ], agent="ops")
    assert not results[0].is_error, results[0]
    assert_gone(vault_path, "Qb8#nM3vXz", "Tb5Wq2Zk9Lm4Xp", "Rc7!kV2mQz")


def test_a_persons_own_secret_is_left_to_them(vault_path: Path) -> None:
    """The gateway masks what a write brings; a secret already in a person's note is theirs
    (lint names it) — alaya editing the note's frontmatter does not rewrite their body."""
    v = vault_path
    note = v / "cards" / "mine.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("---\nid: card-mine0001\ntype: concept\ntitle: Mine\n---\n"
                    "my own note: the wifi password is Ow5#nE3rPw\n")
    r = alaya(v, "feedback", "useful", "card-mine0001")
    assert r.exit_code == 0, r.output
    r = alaya(v, "new", "--title", "Other", "--type", "concept", "--claim", "fine")
    assert r.exit_code == 0, r.output
    r = alaya(v, "link", "Mine", "Other", "--rel", "RELATED_TO", "--reason",
              "their pin is Lk8@vB2nQm")
    assert r.exit_code == 0, r.output
    text = note.read_text()
    assert "Ow5#nE3rPw" in text and "Lk8@vB2nQm" not in text


def test_capture_stdin_key_over_two_messages(vault_path: Path) -> None:
    body = ["MIIEogIBAAKCAQEAz8Wq2Lm5Nr7Vx3Kp9Tt4Yh1Gf6Dc8Bx2Aq5Sz3Rw9Pv1",
            "Mu7Nk2Lj5Hg8Fd3Sa6Qw9Er4Ty1Ui7Op2As5Df8Gh3Jk6Lz9Xc4Vb7Nm1Qa8Ws"]
    lines = [{"id": "k1", "role": "user",
              "content": "key, part one:\n-----BEGIN PRIVATE KEY-----\n" + body[0]},
             {"id": "k2", "role": "user", "content": body[1] + "\n-----END PRIVATE KEY-----"}]
    r = alaya(vault_path, "capture", "-", "--session", "keys-over-two",
              input="".join(json.dumps(x) + "\n" for x in lines))
    assert r.exit_code == 0, r.output
    assert_gone(vault_path, *body, outputs=(r.output,))


def test_a_provider_never_receives_a_secret() -> None:
    """Whoever builds a prompt or a batch, what reaches the endpoint (a real local HTTP
    server) has passed the redactor: the chat API and the embeddings API."""
    from vault_engine.providers.embedding import OpenAIEmbedder
    from vault_engine.providers.llm import ChatClient, LLMSettings

    from .openai_server import FakeOpenAI

    with FakeOpenAI() as srv:
        srv.completions.append('{"cards": []}')
        client = ChatClient(LLMSettings(provider="openai", base_url=srv.url, model="m",
                                        api_key=None, timeout_s=10.0, max_retries=0,
                                        daily_call_budget=10, max_response_bytes=1 << 20),
                            backoff_s=0.0)
        client.complete([{"role": "user", "content": "the vpn 口令是 Vp6#kR9mQz，记一下"}])
        OpenAIEmbedder(srv.url, "m", max_retries=0).embed_passages(
            ["deploy with DEPLOY_TOKEN=Dt3Wq8Zm5Lp7Xc"])
        sent = json.dumps([r["body"] for r in srv.requests], ensure_ascii=False)
    assert srv.requests and "[REDACTED:" in sent
    for value in ("Vp6#kR9mQz", "Dt3Wq8Zm5Lp7Xc"):
        assert not windows(value) & {sent[i:i + 6] for i in range(len(sent) - 5)}
