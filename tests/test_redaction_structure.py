"""The redactor finds secrets by structure (vault_engine/redaction.py), in English and Chinese:
each rule with its own examples, and the look-alikes it must leave alone. No value here comes
from a benchmark's case set."""

from __future__ import annotations

import json

import pytest

from vault_engine.redaction import Scanner, credential_name, find_secrets, redact, redact_name
from vault_engine.redaction_input import gate, mask, redact_input
from vault_engine.redaction_shapes import credential_like, looks_secret


def leaked(text: str, value: str) -> bool:
    """Does any 6-character window of `value` survive in `text`?"""
    return any(value[i:i + 6] in text for i in range(len(value) - 5))


def assert_masked(text: str, *values: str) -> str:
    out = redact(text)
    for v in values:
        assert not leaked(out, v), (text, out)
    assert "[REDACTED:" in out
    return out


# -- assignments by name --------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("SMTP_PWD=Qw7#kLp2vX", "Qw7#kLp2vX"),
    ("export MAIL_TOKEN='aa11BB22cc33DD44'", "aa11BB22cc33DD44"),
    ('{"client_secret": "c9Vb-2Lm8-Qz4x"}', "c9Vb-2Lm8-Qz4x"),
    ("spring.datasource.password: Tz5!mKq8", "Tz5!mKq8"),
    ("REDIS_PASS = hunter2024", "hunter2024"),
    ("data:\n  password: qWbRtZxKpLmNvC\n", "qWbRtZxKpLmNvC"),  # random letters, no digit
    ("access_key_id=ZQXW7YTR3PLM9", "ZQXW7YTR3PLM9"),
    ("# 生产库\nORDER_DB_PASSWORD=订单Kx7#q9", "Kx7#q9"),
    ("配置项 app_secret：f3a9c2e1b7d6a5c4f3e2d1c0b9a8f7e6", "f3a9c2e1b7d6a5c4f3e2d1c0b9a8f7e6"),
])
def test_assignment_by_name_suffix(text: str, value: str) -> None:
    assert_masked(text, value[-6:] if not value.isascii() else value)


@pytest.mark.parametrize("name,yes", [
    ("SMTP_PWD", True), ("clientSecret", True), ("X-Api-Key", True), ("requirepass", True),
    ("secret_id", True), ("AccessKeyId", True), ("auth_token", True),
    ("PASSWORD_MIN_LENGTH", False), ("max_tokens", False), ("secretKeyRef", False),
    ("TOKEN_TTL_SECONDS", False), ("key_file", False),
])
def test_credential_names(name: str, yes: bool) -> None:
    assert credential_name(name) is yes


# -- a credential word and a value in one clause, either order, any punctuation width --------
@pytest.mark.parametrize("text,value", [
    ("the admin password for staging is now Kp8-Wq2-Zr4x!", "Kp8-Wq2-Zr4x!"),
    ("Try Lm3#Vq9!Rt — that is the new wifi password.", "Lm3#Vq9!Rt"),
    ("my token was rotated, here it is: Ab3dE5gH7jK9", "Ab3dE5gH7jK9"),
    ("邮箱密码：Zx9!pq7Lm", "Zx9!pq7Lm"),
    ("邮箱密码：「Zx9.pq7Lmw」。", "Zx9.pq7Lmw"),
    ("口令我刚换成 Tr5%ujK2q，别外传", "Tr5%ujK2q"),
    ("Yb7kQ2mN9x 就是测试库的 root 密码", "Yb7kQ2mN9x"),
    ("令牌是Hq4wN8zP2xV6，明天过期", "Hq4wN8zP2xV6"),
    ("堡垒机账号密码 admin/Wq7#Lp2z", "Wq7#Lp2z"),
    ("临时口令（只用今天）：Mz8Kp3Qr7；", "Mz8Kp3Qr7"),
    ("password: Ends.With.Bang!!", "Ends.With.Bang!!"),
    ("the client secret is Ab3Kd9/Pq7Lm2Zx8/Wn4 for now", "Ab3Kd9/Pq7Lm2Zx8/Wn4"),
    ("log in as admin / Qx7Tz@2030.kWp then rotate", "Qx7Tz@2030.kWp"),  # not an e-mail
    ("网关令牌为 77QX$ZR9KEY，别外传", "77QX$ZR9KEY"),  # ends like a name, is none
])
def test_clause_either_order(text: str, value: str) -> None:
    out = assert_masked(text, value)
    assert value[-3:] not in out.replace("[REDACTED:password]", "")  # no tail left


@pytest.mark.parametrize("text", [
    "the password is stored in Vault",
    "Can you check whether the password I typed was right?",
    "Signup fails: field \"password\" is required",
    "密码是否正确",
    "注册接口返回「密码不能为空」",
    "密钥轮换周期是 90 天，下一次在 7 月 1 日",
    "Redis 端口 6379，密码放在 KMS 里了",
    "Postgres on 5432; the password lives in Vault at kv/prod/pg",
    "after openssl 3.0.13 and requests 2.32.3 the OAuth token refresh works",
    "升级到 v2.14.3 之后 token 校验就正常了",
    "the token fix is commit 9c4e1f7a2b3d5e6f708192a3b4c5d6e7f8091a2b",
    "工单 8a1f4c2e-9b3d-4e6f-a7c8-1d2e3f4a5b6c：登录后 token 过期太快",
    "Set max_tokens=4096 and temperature=0.2",
    "PASSWORD_MIN_LENGTH=12 and TOKEN_TTL_SECONDS=3600",
    "OPENAI_API_KEY=${OPENAI_API_KEY:?set it in your shell}",
    "DB_PASSWORD=${DB_PASSWORD} 由 k8s 注入",
    "api_token: <your-token-here>",
    "access_token 那一栏先填 <在此填写你的token>",
    "postgres://USER:PASSWORD@HOST:5432/DBNAME",
    'curl -H "Authorization: Bearer $GITHUB_TOKEN" x',
    "用 secretKeyRef 引用：name: mysql-secret，key: root-password",
    "mkdir -p build && ssh -p 2222 host && docker run -p 8080:80 img",
    "I passed the GitHub-Actions login check with Python3 on MacBookPro16",
])
def test_look_alikes_are_left_alone(text: str) -> None:
    assert redact(text) == text


def test_value_alone_on_a_later_line() -> None:
    text = "the wifi password they sent is below, case sensitive:\n\nQw8ErT5yUi3\n\nthanks"
    assert_masked(text, "Qw8ErT5yUi3")
    assert_masked("the password is below:\n\nPlxQrtnvbkms7\n", "PlxQrtnvbkms7")
    zh = "运维账号：ops_li\n（密码在下一行）\n\nPq7%Wm2xLz\n"
    out = assert_masked(zh, "Pq7%Wm2xLz")
    assert "ops_li" in out


def test_table_column_named_password() -> None:
    text = ("| env | user | password |\n|---|---|---|\n| dev | u1 | Gh7-Kl9-Mn2 |\n"
            "| prod | u2 | Prd#8sTq |\n")
    out = assert_masked(text, "Gh7-Kl9-Mn2", "Prd#8sTq")
    assert "| dev | u1 |" in out
    zh = "| 环境 | 账号 | 密码 |\n|---|---|---|\n| 测试 | qa | Tt5-Yy6-Uu7 |\n"
    assert_masked(zh, "Tt5-Yy6-Uu7")


# -- command lines and headers --------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("mysql -uroot -pVb8#nM2kq -h db", "Vb8#nM2kq"),
    ("mariadb -u app -pKm4@2031.zQw -e 'select 1'", "Km4@2031.zQw"),
    ("redis-cli -h cache -a 'Rq3$wE8tY' ping", "Rq3$wE8tY"),
    ("sshpass -p 'Hj6^kL9pQ' ssh ops@host", "Hj6^kL9pQ"),
    ("curl -u deploy:Fx4!gH7jK https://x.example.com", "Fx4!gH7jK"),
    ("lftp -u backup,Np2@wQ5eR ftp.example.com", "Np2@wQ5eR"),
    ("docker login -u bot -p Dk9%rT3yU registry.example.com", "Dk9%rT3yU"),
    ("127.0.0.1:6379> AUTH Ax7&bN4mQ", "Ax7&bN4mQ"),
    ("wget --password=Wz3*eR6tY https://x.example.com/f", "Wz3*eR6tY"),
    ("redis-server --requirepass \"Rp4#sD5fG\"", "Rp4#sD5fG"),
    ("hf-cli login --token hf_Zx8Cv7Bn6Mq5Wl4Ke3", "hf_Zx8Cv7Bn6Mq5Wl4Ke3"),
    ("帮我执行 mysql -h 10.0.0.8 -ureport -pRe9#port2 看下慢查询", "Re9#port2"),
    ("Authorization: Bearer abcdefghij1234567890XYZ", "abcdefghij1234567890XYZ"),
    ("Authorization: token Kk3Jj4Hh5Gg6Ff7Dd8", "Kk3Jj4Hh5Gg6Ff7Dd8"),
    ("Cookie: sessid=Ab12Cd34Ef56; theme=dark", "Ab12Cd34Ef56"),
    ("请求头 X-Api-Key：Kk2Jj3Hh4Gg5Ff6", "Kk2Jj3Hh4Gg5Ff6"),
])
def test_command_lines_and_headers(text: str, value: str) -> None:
    assert_masked(text, value)


# -- URLs -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text,value", [
    ("mongodb://root:P@ss@2026.x@db.example.com:27017/app", "P@ss@2026.x"),
    ("连接串 redis://:Zq9@Wm2#r@cache.internal:6379/0", "Zq9@Wm2#r"),
    ("https://open.example.com/bot/v2/hook/1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
     "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"),
    ("机器人地址 https://api.example.com/send?access_token=9f8e7d6c5b4a39281706f5e4d3c2b1a0",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("https://chat.example.com/api/webhooks/123456789/Xyz123abc456DEF789",
     "Xyz123abc456DEF789"),
])
def test_url_credentials(text: str, value: str) -> None:
    assert_masked(text, value)


# -- PEM across turns, tool calls and results -----------------------------------------------
KEY_BODY = ["MIIEowIBAAKCAQEAx4Qm0v8sWcUQpL2Zs9dKfJ3hT6yBn1VrEoXa5",
            "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4cXV4",
            "QkFSQkFaUVVYQkFSQkFaUVVYQkFSQkFaUVVYQkFSQkFaUVVYQkFS"]


def test_pem_block_split_over_two_turns() -> None:
    first = "part 1:\n-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY[0] + "\n"
    second = "第二段：\n" + "\n".join(KEY_BODY[1:]) + "\n-----END RSA PRIVATE KEY-----\n谢谢"
    doc = json.dumps([{"role": "user", "content": first},
                      {"role": "assistant", "content": "ok, the rest?"},
                      {"role": "user", "content": second}], ensure_ascii=False)
    out = redact_input(doc.encode()).decode()
    for line in KEY_BODY:
        assert not leaked(out, line)
    assert "END RSA PRIVATE KEY" not in out and "谢谢" in out and "ok, the rest?" in out
    scanner = Scanner()
    assert find_secrets(first, scanner) and scanner.pem_open
    assert not leaked(redact(second, scanner), KEY_BODY[1]) and not scanner.pem_open


def test_tool_result_answering_a_credential_command() -> None:
    lines = [
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "toolu_01",
                                                       "input": {"command":
                                                       "kubectl get secret db -o json | "
                                                       "jq -r .data.password | base64 -d"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result",
                                                  "tool_use_id": "toolu_01",
                                                  "content": "Vq8#mW2!zX5k\n"}]}},
    ]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    out = redact_input(data).decode()
    assert not leaked(out, "Vq8#mW2!zX5k") and "toolu_01" in out
    zh = [{"role": "user", "content": "帮我看下 redis 的密码"},
          {"role": "tool", "content": "Hs7$kq2Wm9"}]
    assert not leaked(redact_input(json.dumps(zh).encode()).decode(), "Hs7$kq2Wm9")


def test_pgpass_line() -> None:
    assert_masked("db.internal:5432:app:report:Rp9#tY6uI", "Rp9#tY6uI")


# -- names, masks, the gateway ---------------------------------------------------------------
def test_token_in_a_name() -> None:
    name = "run-ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWx" + ".txt"
    assert not leaked(redact_name(name), "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWx")
    assert not leaked(redact_name("deploy-Xk9mQ2wL7pZ4vB8nR3tY"), "Xk9mQ2wL7pZ4vB8nR3tY")
    assert redact_name("session-2026-05-01-ops") == "session-2026-05-01-ops"
    assert redact_name("0c8f2a6e-31d4-4b59-8e27-b456660646fb") == \
        "0c8f2a6e-31d4-4b59-8e27-b456660646fb"


def test_mask_keeps_nothing_of_the_value() -> None:
    out = redact("token: sk-proj-Abc123Def456Ghi789Jkl012")
    assert out == "token: [REDACTED:openai-key]"
    assert mask({"a": ["DB_PASS=Xy7#pQ2w"]}) == {"a": ["DB_PASS=[REDACTED:password]"]}


def test_gate_masks_only_what_is_new() -> None:
    before = "a person's note: db password is Own3r#Pass\n"
    after = before + "alaya adds: the api token is Ag3nt#Tok9\n"
    out = gate(after, before)
    assert "Own3r#Pass" in out and "Ag3nt#Tok9" not in out


def test_shapes() -> None:
    assert looks_secret("BaIdWxCGClC") and looks_secret("34d6c2b75c720261323a592362778fe1")
    assert not looks_secret("GitHubActions") and not looks_secret("ubuntu2204")
    assert looks_secret("clNZZCFwbzkxbnFN") and not looks_secret("Alertmanager")
    assert not looks_secret("ops@example.com") and looks_secret("Qx7Tz@2030.kWp")
    assert not looks_secret("card-a1b2c3d4") and not looks_secret("ent-0a9b8c7d")
    assert not looks_secret("9c4e1f7a2b3d5e6f708192a3b4c5d6e7f8091a2b")
    assert credential_like("hunter2024") and not credential_like("required")


def test_long_runs_cost_linear_time() -> None:
    """A long run of letters after a credential word (a pasted hash, a minified line) is
    judged in linear time: no rule backtracks over every way to split it."""
    import time

    for text in ("the token:\n" + "abcdefghij" * 4 + "Z9!\n",
                 "password " + "kq" * 30 + "Z",
                 "npm auth\n" + "q" * 3000 + "!\n",
                 "SECRET " + "Ab" * 1500 + "=" + "x" * 500):
        start = time.perf_counter()
        redact(text)
        assert time.perf_counter() - start < 1.0


def test_a_path_of_words_beside_an_english_pass_is_no_secret() -> None:
    """"pass" the verb and a path made of words (an error naming a note) in one clause: the
    path is a note's, not a password (the door sweep's traverse error was masked, which also
    broke the echo of the caller's own argument)."""
    from vault_engine.redaction import redact

    for text in ("✗ no node 'cards/@alice/gotcha/Gotcha - the queue.md' (fix: pass node ids)",
                 "pass the path notes/@ops/Runbook/Deploy to the tool",
                 "把 cards/@bob/decision/Rollout 这个路径 pass 给 traverse"):
        assert redact(text) == text
    assert "Tr0ub4dor" not in redact("the db pass is Tr0ub4dor/x9Lq")


def test_a_wikilink_beside_a_credential_word_is_a_note_not_a_value() -> None:
    """`[[id|title]]` names a note; "login" in the same clause does not make it a password
    (a gap report's "consolidate [[cert-a|Mobile login certificate]]" was masked)."""
    from vault_engine.redaction import redact

    for text in ("consolidate [[cert-a|Mobile login certificate]], [[cert-b|Certbot job]].",
                 "登录问题见 [[card-9f2|Mobile 登录 token 刷新]] 和 [[Auth-Gateway|网关]]"):
        assert redact(text) == text
    masked = redact("see [[cert-a|Mobile]]; the login password is Xq9!pLm2z")
    assert "[[cert-a|Mobile]]" in masked and "Xq9!pLm2z" not in masked
