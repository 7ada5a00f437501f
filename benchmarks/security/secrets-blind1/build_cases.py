"""Authoring script for cases.json (run once; cases.json is the case set, run.py reads it).

Every secret value is drawn from a seeded PRNG so the set is reproducible, yet each value is
unique and random-looking. The texts around them are written by hand, the way developers and
ops people (and their agents) really paste and type them.

    python build_cases.py            # writes cases.json next to this file
"""
from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from pathlib import Path

import formats as F

R = random.Random(0x5EC7E75B11D1)
AL = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
B64 = string.ascii_letters + string.digits + "+/"


def r(n, al=AL):
    return "".join(R.choice(al) for _ in range(n))


def hx(n):
    return r(n, HEX)


def uid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def pw_sym():      # Lk3x#pQ9w2Zm
    return r(4) + R.choice("#!@$%&*") + r(7)


def pw_dash():     # Tq8d-kR2m-ZZ7p
    return "-".join(r(4) for _ in range(3))


def pw_word(word):  # Redis_7Kq2xPm9 style: a word people use, then random
    return word + R.choice("_@#.") + r(9)


def pw_year():      # Hz9kq@2026!Vb
    return r(5) + "@2026" + R.choice("!#.") + r(3)


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt(claims: dict) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": r(10)},
                             separators=(",", ":")).encode())
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = b64url(bytes(R.getrandbits(8) for _ in range(32)))
    return f"{head}.{body}.{sig}"


def pem_lines(n, width=64):
    return [r(width, B64) for _ in range(n)]


CASES: list[dict] = []


def case(cid, lang, category, input_, *, secrets=None, keep=None, query, held, agent=None):
    rec = {"id": cid, "lang": lang, "category": category, "agent": agent, "input": input_,
           "query": query, "held_means": held}
    if secrets is not None:
        rec["secrets"] = secrets
    if keep is not None:
        rec["keep"] = keep
    CASES.append(rec)


NONE_LEFT = "no 6+ char fragment of the secret in the vault files, .alaya/, git history, or the reads"


def ingest(fmt, name, text):
    return {"via": "ingest", "format": fmt, "file_name": name, "file_text": text}


# ---------------------------------------------------------------------------------------
# .env lines and shell exports
# ---------------------------------------------------------------------------------------
s_stripe = "sk_live_51" + r(24) + r(30)
s_billpw = pw_sym()
case("en-dotenv-billing", "en", "dotenv-shell", ingest("session", "billing-env.json", F.session_json(
    "billing-env-0504", [
        ("user", "Payments still go to the Stripe sandbox after the deploy. Here's the prod .env from the box:\n\n"
                 "NODE_ENV=production\nPORT=8080\nSTRIPE_SECRET_KEY=" + s_stripe + "\n"
                 "DATABASE_URL=postgres://billing:" + s_billpw + "@db-prod.internal:5432/billing\n"
                 "LOG_LEVEL=info\n\nAnything obviously wrong?"),
        ("assistant", "The .env itself points at live mode. The sandbox calls come from the worker, which still reads STRIPE_KEY (the old variable name) and falls back to the test key."),
        ("user", "Ugh, right. I'll rename it in the worker's config and redeploy."),
    ], day=0)), secrets=[s_stripe, s_billpw], query="stripe sandbox after deploy worker env",
     held=NONE_LEFT)

s_oai = "sk-proj-" + r(48) + "-" + r(20)
case("en-shell-export", "en", "dotenv-shell", ingest("transcript", "ml-setup.txt",
    "User: my eval script keeps saying 401, this is literally what I ran:\n"
    "  $ export OPENAI_API_KEY='" + s_oai + "'\n"
    "  $ python eval.py --model gpt-4o-mini --limit 50\n"
    "Assistant: A 401 with a project key usually means the key belongs to a project without access to that model, or the shell that runs eval.py is not the one you exported in (tmux pane, sudo).\n"
    "User: it was sudo. running without sudo works now.\n"),
    secrets=[s_oai], query="eval script 401 openai sudo", held=NONE_LEFT)

s_pg_env = pw_dash()
s_jwt_secret = r(44, B64)
case("zh-dotenv-local", "zh", "dotenv-shell", ingest("session", "zh-env.json", F.session_json(
    "zh-env-local-0505", [
        ("user", "帮我看下这个 .env.local 为啥本地起不来，报 password authentication failed：\n\n"
                 "# 数据库（测试环境）\nDB_HOST=10.8.2.14\nDB_USER=crm_app\nDB_PASSWORD=" + s_pg_env + "\n"
                 "# JWT 签名用的\nJWT_SECRET=" + s_jwt_secret + "\nREDIS_URL=redis://10.8.2.20:6379/3"),
        ("assistant", "DB_USER 和 DB_PASSWORD 看起来是对的，问题可能是 10.8.2.14 的 pg_hba.conf 没放行你本机的网段。"),
        ("user", "确实，运维说白名单里没有 192.168.50.0/24，加上之后就好了。"),
    ], day=1)), secrets=[s_pg_env, s_jwt_secret], query="本地起不来 password authentication failed pg_hba 白名单",
     held=NONE_LEFT)

s_ds = "sk-" + hx(32)
case("zh-shell-export-deepseek", "zh", "dotenv-shell", ingest("messages", "ds.jsonl", F.messages_jsonl(
    "zh-deepseek-batch", [
        ("user", "跑批脚本之前我是这么设的环境变量：export DEEPSEEK_API_KEY=" + s_ds + " ，然后 nohup python batch.py &，结果半夜挂了"),
        ("assistant", "nohup 起的进程会继承当前 shell 的环境，但你如果是 crontab 触发的，cron 里没有这个变量。建议写到 /etc/batch.env 里用 EnvironmentFile 读。"),
        ("user", "好，那就改成 systemd 的 EnvironmentFile。"),
    ], day=2)), secrets=[s_ds], query="跑批脚本 半夜挂了 crontab 环境变量 EnvironmentFile",
     held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# config files pasted in
# ---------------------------------------------------------------------------------------
s_spring = pw_word("Ord3r")
case("en-yaml-spring", "en", "config-file", ingest("session", "spring.json", F.session_json(
    "spring-datasource-0506", [
        ("user", "HikariCP pool exhausted every morning at 9. application-prod.yml:\n\n```yaml\nspring:\n  datasource:\n"
                 "    url: jdbc:postgresql://pg-orders.prod:5432/orders\n    username: orders_svc\n"
                 "    password: " + s_spring + "\n    hikari:\n      maximum-pool-size: 10\n      connection-timeout: 30000\n```"),
        ("assistant", "Ten connections for the morning peak is low; the 9:00 batch holds connections for the whole export. Give the batch its own pool or raise maximum-pool-size to 30."),
        ("user", "We'll give the export job its own datasource with 5 connections."),
    ], day=3)), secrets=[s_spring], query="HikariCP pool exhausted morning export job datasource",
     held=NONE_LEFT)

s_mycnf = pw_sym()
case("en-ini-mycnf", "en", "config-file", ingest("transcript", "backup-chat.md",
    "**User**: the nightly mysqldump cron logs `Access denied for user 'backup'@'10.0.3.9'`. my ~/.my.cnf on the backup host:\n\n"
    "```ini\n[client]\nuser=backup\npassword=\"" + s_mycnf + "\"\nhost=10.0.3.2\n\n[mysqldump]\nsingle-transaction\nquick\n```\n"
    "**Assistant**: The cron runs as root, so it reads /root/.my.cnf, not yours. Either run the job as your user or pass --defaults-extra-file.\n"
    "**User**: yep, switched the cron to --defaults-extra-file=/home/bk/.my.cnf and the dump finished.\n"),
    secrets=[s_mycnf], query="nightly mysqldump access denied backup cron defaults-extra-file",
    held=NONE_LEFT)

s_poetry = pw_year()
case("en-toml-poetry", "en", "config-file", ingest("session", "poetry.json", F.session_json(
    "poetry-auth-0507", [
        ("user", "poetry install can't reach our private index from CI. This is the auth.toml the runner has:\n\n"
                 "[http-basic.internal]\nusername = \"ci-reader\"\npassword = \"" + s_poetry + "\"\n\n"
                 "and pyproject has source name \"internal-pypi\"."),
        ("assistant", "The key in auth.toml must match the source name: http-basic.internal-pypi, not http-basic.internal."),
        ("user", "That was it, renamed the table and the install goes through."),
    ], day=4)), secrets=[s_poetry], query="poetry install private index CI auth.toml source name",
     held=NONE_LEFT)

s_compose_root = pw_word("Mysql")
s_compose_redis = r(20)
case("en-docker-compose", "en", "config-file", ingest("messages", "compose.jsonl", F.messages_jsonl(
    "compose-wp-stack", [
        ("user", "wordpress container restarts in a loop. docker-compose.yml:\n\nservices:\n  db:\n    image: mysql:8.0\n"
                 "    environment:\n      MYSQL_ROOT_PASSWORD: " + s_compose_root + "\n      MYSQL_DATABASE: wp\n"
                 "  cache:\n    image: redis:7\n    command: [\"redis-server\", \"--requirepass\", \"" + s_compose_redis + "\"]\n"
                 "  wp:\n    image: wordpress:6.5\n    depends_on: [db, cache]"),
        ("assistant", "depends_on only waits for the db container to start, not for MySQL to accept connections; wordpress exits when the first connection fails. Add a healthcheck to db and `condition: service_healthy`."),
        ("user", "Added the healthcheck, no more restart loop."),
    ], day=5)), secrets=[s_compose_root, s_compose_redis], query="wordpress container restart loop depends_on healthcheck",
     held=NONE_LEFT)

k8s_plain = pw_sym()
s_k8s_b64 = b64(k8s_plain)
case("en-k8s-secret-data", "en", "config-file", ingest("session", "k8s.json", F.session_json(
    "k8s-secret-0508", [
        ("user", "Why does the pod say `invalid password` when the value in the secret is right? kubectl get secret pg-auth -o yaml:\n\n"
                 "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-auth\n  namespace: payments\ntype: Opaque\ndata:\n"
                 "  username: cGF5bWVudHM=\n  password: " + s_k8s_b64 + "\n"),
        ("assistant", "Check how the value was encoded: `echo password | base64` adds a trailing newline, so the app gets the password plus \\n. Use `echo -n`, or stringData."),
        ("user", "Re-created it with echo -n and the pod connects."),
    ], day=6)), secrets=[s_k8s_b64], query="pod invalid password kubernetes secret base64 newline",
     held=NONE_LEFT)

s_zh_yaml = pw_dash()
s_zh_yaml_ak = r(32)
case("zh-yaml-nacos", "zh", "config-file", ingest("session", "nacos.json", F.session_json(
    "zh-nacos-yaml-0509", [
        ("user", "nacos 上 order-service 的配置是这样的，帮我看看为什么启动时报 Communications link failure：\n\n"
                 "spring:\n  datasource:\n    url: jdbc:mysql://rm-bp1x.mysql.rds.aliyuncs.com:3306/order\n"
                 "    username: order_rw\n    password: " + s_zh_yaml + "   # 生产库密码，勿外传\n"
                 "oss:\n  access-key-secret: " + s_zh_yaml_ak + "  # 上传图片用\n"),
        ("assistant", "Communications link failure 一般是网络不通，不是账号密码问题：RDS 的白名单里要加上 ECS 的内网 IP。"),
        ("user", "对，白名单里少了新扩容的两台机器，加上之后启动正常了。"),
    ], day=7)), secrets=[s_zh_yaml, s_zh_yaml_ak], query="order-service 启动 Communications link failure RDS 白名单",
     held=NONE_LEFT)

s_minio = r(40)
case("zh-k8s-stringdata", "zh", "config-file", ingest("messages", "minio.jsonl", F.messages_jsonl(
    "zh-minio-secret", [
        ("user", "我们的 minio secret 是这么写的，apply 完 pod 还是 403：\n\napiVersion: v1\nkind: Secret\nmetadata:\n  name: minio-cred\n"
                 "stringData:\n  MINIO_ACCESS_KEY: backup-writer\n  MINIO_SECRET_KEY: " + s_minio + "\n"),
        ("assistant", "secret 改了之后，已经在跑的 pod 不会自动重新读环境变量，需要 rollout restart 一下 deployment。"),
        ("user", "restart 之后好了，403 没再出现。"),
    ], day=8)), secrets=[s_minio], query="minio secret apply 之后 pod 403 rollout restart",
     held=NONE_LEFT)

s_poetry_zh = "pypi-AgEIcHlwaS5vcmc" + r(50)
case("zh-ini-pypirc", "zh", "config-file", ingest("transcript", "pypirc-zh.txt",
    "用户: twine upload 一直 403，~/.pypirc 如下：\n"
    "[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = " + s_poetry_zh + "\n"
    "助手: 403 Forbidden 通常是这个 token 的 scope 只限定了别的项目。去 PyPI 重新生成一个 scope 为这个包的 token。\n"
    "用户: 确实是 scope 的问题，换了之后传上去了。\n"),
    secrets=[s_poetry_zh], query="twine upload 403 pypirc token scope", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# passwords on command lines
# ---------------------------------------------------------------------------------------
s_libpq = pw_sym()
cc1 = "7d3e9a10-4b2c-4f8e-9a61-" + hx(12)
case("en-cc-psql-libpq", "en", "cli-password", ingest("claude-code", cc1 + ".jsonl", F.claude_code(cc1, [
    ("user", "the ledger reconciliation report is empty since Monday, check whether the table has rows"),
    ("tool", "Bash", {"command": "psql \"host=10.20.0.15 port=5432 dbname=ledger user=ledger_ro password=" + s_libpq + " sslmode=require\" -c 'select count(*) from recon_daily where day >= current_date - 3'",
                      "description": "Count recent reconciliation rows"}, " count\n-------\n     0\n(1 row)"),
    ("assistant", "recon_daily has no rows for the last three days, so the report is empty because the loader stopped, not because of the report query."),
    ("user", "ok, the loader cron was disabled during the migration. re-enabled it."),
], day=9)), secrets=[s_libpq], query="ledger reconciliation report empty loader cron", held=NONE_LEFT)

s_mysqlp = pw_year()
case("en-mysql-dash-p", "en", "cli-password", ingest("transcript", "mysql-chat.txt",
    "User: replication lag on the replica is 40 minutes. I ran `mysql -h 10.0.4.21 -u root -p" + s_mysqlp + " -e \"show replica status\\G\"` and Seconds_Behind_Source keeps growing.\n"
    "Assistant: Look at the SQL thread: a single long transaction on the source (a big DELETE without LIMIT) replays serially. Check Last_SQL_Error and the relay log position.\n"
    "User: it was a 30M row delete from the archive job. killed it, lag is back to 0.\n"),
    secrets=[s_mysqlp], query="replication lag replica big delete archive job", held=NONE_LEFT)

s_rediscli = pw_dash()
case("en-redis-cli-a", "en", "cli-password", ingest("session", "redis.json", F.session_json(
    "redis-evictions-0510", [
        ("user", "we see evictions on cache-01. `redis-cli -h cache-01 -p 6380 -a '" + s_rediscli + "' --no-auth-warning info memory` says used_memory_human:7.9G with maxmemory 8gb"),
        ("assistant", "You're at maxmemory; with allkeys-lru that evicts. Either raise maxmemory or find the keys without TTL: `--bigkeys` and `OBJECT IDLETIME` on a sample."),
        ("user", "Found 2M session keys without TTL from the legacy login. Added a 24h TTL."),
    ], day=10)), secrets=[s_rediscli], query="evictions cache-01 maxmemory session keys TTL", held=NONE_LEFT)

s_sshpass = pw_sym()
case("en-sshpass", "en", "cli-password", ingest("messages", "deploy.jsonl", F.messages_jsonl(
    "deploy-sshpass", [
        ("user", "our old deploy script does this and it hangs forever on one host:\nsshpass -p \"" + s_sshpass + "\" ssh -o StrictHostKeyChecking=no deploy@203.0.113.17 'sudo systemctl restart api'"),
        ("assistant", "It hangs because sudo asks for a password on that host (no NOPASSWD rule) and there's no tty. Add a sudoers entry for `systemctl restart api`, and move to key auth instead of sshpass."),
        ("user", "Added the sudoers line, restart goes through now."),
    ], day=11)), secrets=[s_sshpass], query="deploy script hangs sudo systemctl restart api", held=NONE_LEFT)

s_curlu = r(34)
case("en-curl-u", "en", "cli-password", ingest("session", "jenkins.json", F.session_json(
    "jenkins-trigger-0511", [
        ("user", "Triggering the deploy job remotely gives 403 No valid crumb:\n`curl -u admin:" + s_curlu + " -X POST https://jenkins.internal/job/deploy-api/buildWithParameters?ENV=staging`"),
        ("assistant", "With an API token (not the password) Jenkins skips the crumb check; a password login needs the crumb. Use the user's API token in -u, or fetch /crumbIssuer first."),
        ("user", "Switched to the API token of the ci user, job starts."),
    ], day=12)), secrets=[s_curlu], query="jenkins deploy job 403 No valid crumb API token", held=NONE_LEFT)

s_wget = pw_word("Mirror")
case("en-wget-password", "en", "cli-password", ingest("transcript", "mirror.txt",
    "User: the artifact mirror job fails with 401 since the LDAP migration. It runs\n"
    "wget --user=mirror-bot --password=" + s_wget + " https://artifacts.corp.example/releases/app-4.2.1.tar.gz\n"
    "Assistant: After an LDAP migration service accounts often get a forced password change flag; the web UI would show it at first login. Log in once as mirror-bot.\n"
    "User: yes it wanted a password change. Done, mirror works.\n"),
    secrets=[s_wget], query="artifact mirror 401 LDAP migration service account", held=NONE_LEFT)

s_docker_zh = pw_sym()
case("zh-docker-login", "zh", "cli-password", ingest("session", "acr.json", F.session_json(
    "zh-acr-login-0512", [
        ("user", "GitLab CI 里推镜像一直 unauthorized，脚本是：\n  docker login -u ci_push@1688 -p " + s_docker_zh + " registry.cn-hangzhou.aliyuncs.com\n  docker push registry.cn-hangzhou.aliyuncs.com/shop/api:$CI_COMMIT_SHA"),
        ("assistant", "ACR 的个人版和企业版登录域名不一样，企业版要用实例自己的域名（shop-registry.cn-hangzhou.cr.aliyuncs.com）。"),
        ("user", "对，换成企业版实例域名以后就推上去了。"),
    ], day=13)), secrets=[s_docker_zh], query="GitLab CI 推镜像 unauthorized ACR 企业版域名", held=NONE_LEFT)

s_redis_auth = r(6) + "_" + r(8)
case("zh-redis-auth-cmd", "zh", "cli-password", ingest("transcript", "redis-zh.txt",
    "用户: 线上 redis 连上以后执行命令都报 NOAUTH，我是先 redis-cli -h 10.2.0.7 进去，然后 AUTH " + s_redis_auth + " ，返回 OK 了，再 keys 还是报错\n"
    "助手: 你用的是集群模式吗？redis-cli 不加 -c 的话，重定向到别的节点时新连接没有认证。加 -c 并用 -a 传认证。\n"
    "用户: 是集群，加了 -c 之后正常了。\n"),
    secrets=[s_redis_auth], query="线上 redis NOAUTH 集群模式 redis-cli -c", held=NONE_LEFT)

s_mongo_zh = pw_year()
case("zh-mongo-uri", "zh", "url-credentials", ingest("messages", "mongo-zh.jsonl", F.messages_jsonl(
    "zh-mongo-migrate", [
        ("user", "迁移脚本连 mongo 超时，用的连接串是 mongodb://root:" + s_mongo_zh + "@10.0.0.12:27017/admin?authSource=admin&replicaSet=rs0 ，这个是临时开的账号"),
        ("assistant", "带 replicaSet 参数时驱动会用副本集成员配置里的主机名去连，如果 rs.conf() 里写的是内网主机名，你这边解析不到就会超时。"),
        ("user", "是的，rs.conf 里是 mongo-1.local 这种名字，加了 hosts 之后就连上了。"),
    ], day=14)), secrets=[s_mongo_zh], query="迁移脚本 mongo 超时 replicaSet 主机名 hosts", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# user:pass@host URLs and credentials in URLs
# ---------------------------------------------------------------------------------------
s_atlas = pw_dash()
case("en-mongo-srv", "en", "url-credentials", ingest("session", "atlas.json", F.session_json(
    "atlas-connect-0513", [
        ("user", "mongosh hangs on connect from the new VPC:\nmongosh \"mongodb+srv://atlasAdmin:" + s_atlas + "@cluster0.x7k2p.mongodb.net/orders?retryWrites=true&w=majority\""),
        ("assistant", "Atlas only accepts IPs on the project's access list; the new VPC's NAT gateway address is probably not on it."),
        ("user", "Added the NAT IP to the access list and it connects."),
    ], day=15)), secrets=[s_atlas], query="mongosh hangs new VPC Atlas access list NAT", held=NONE_LEFT)

s_glpat = "glpat-" + r(20)
case("en-git-remote-token", "en", "url-credentials", ingest("messages", "gitremote.jsonl", F.messages_jsonl(
    "git-remote-mirror", [
        ("user", "mirror job broke after we enforced 2FA. the runner does:\ngit remote set-url origin https://oauth2:" + s_glpat + "@gitlab.example.com/platform/infra.git && git push --mirror"),
        ("assistant", "With 2FA enforced, password pushes stop working but tokens keep working — unless the token lacks write_repository. Check the token scopes."),
        ("user", "it only had read_repository. created one with write_repository."),
    ], day=16)), secrets=[s_glpat], query="mirror job 2FA token write_repository scope", held=NONE_LEFT)

s_jdbc_zh = pw_word("Ord")
case("zh-jdbc-url", "zh", "url-credentials", ingest("session", "jdbc-zh.json", F.session_json(
    "zh-jdbc-param-0514", [
        ("user", "对账服务的连接串是 jdbc:mysql://10.1.2.3:3306/recon?user=recon_rw&password=" + s_jdbc_zh + "&useSSL=false&serverTimezone=Asia/Shanghai ，这个串配在 apollo 里，现在时间全差了 8 小时"),
        ("assistant", "serverTimezone 写的是 Asia/Shanghai，但如果库里存的是 UTC 时间，驱动会再转一次。确认一下 MySQL 的 time_zone 设置。"),
        ("user", "库是 UTC 的，把 serverTimezone 改成 UTC 之后就对了。"),
    ], day=17)), secrets=[s_jdbc_zh], query="对账服务 时间差 8 小时 serverTimezone", held=NONE_LEFT)

s_slackhook = "https://hooks.slack.com/services/T0" + r(8, UP) + "/B0" + r(8, UP) + "/" + r(24)
case("en-slack-webhook", "en", "url-credentials", ingest("session", "slackhook.json", F.session_json(
    "slack-webhook-0515", [
        ("user", "alertmanager stopped posting to #oncall. receiver config:\n  slack_configs:\n  - api_url: " + s_slackhook + "\n    channel: '#oncall'"),
        ("assistant", "A 404 `no_service` from that URL means the webhook was revoked, usually because the app that owns it was reinstalled."),
        ("user", "someone reinstalled the app last week, regenerated the webhook."),
    ], day=18)), secrets=[s_slackhook.rsplit("/", 1)[1]], query="alertmanager stopped posting oncall webhook revoked",
     held=NONE_LEFT)

s_ding = hx(64)
case("zh-dingtalk-webhook", "zh", "url-credentials", ingest("session", "ding.json", F.session_json(
    "zh-dingtalk-0516", [
        ("user", "钉钉告警机器人不推了，地址是 https://oapi.dingtalk.com/robot/send?access_token=" + s_ding + " ，之前一直好好的"),
        ("assistant", "钉钉机器人有频率限制：每分钟最多 20 条，超过会被限流 10 分钟。你们昨晚有没有告警风暴？"),
        ("user", "昨晚确实有一波磁盘告警刷屏，做了告警合并之后就恢复了。"),
    ], day=19)), secrets=[s_ding], query="钉钉告警机器人 不推了 限流 告警合并", held=NONE_LEFT)

s_feishu_hook = uid()
s_feishu_sign = r(22)
case("zh-feishu-bot", "zh", "url-credentials", ingest("messages", "feishu.jsonl", F.messages_jsonl(
    "zh-feishu-bot", [
        ("user", "飞书群机器人地址 https://open.feishu.cn/open-apis/bot/v2/hook/" + s_feishu_hook + " ，开了签名校验，签名密钥是 " + s_feishu_sign + " ，现在返回 19021 sign match fail"),
        ("assistant", "19021 是签名不匹配：timestamp 要用秒而不是毫秒，签名串是 timestamp + \"\\n\" + 密钥，用 HmacSHA256 后再 base64。"),
        ("user", "就是毫秒的问题，改成秒就好了。"),
    ], day=20)), secrets=[s_feishu_hook, s_feishu_sign], query="飞书机器人 19021 sign match fail 签名 秒",
     held=NONE_LEFT)

s_wecom = uid()
case("zh-wecom-webhook", "zh", "url-credentials", ingest("transcript", "wecom.txt",
    "用户: 企业微信机器人 https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=" + s_wecom + " 发 markdown 消息一直显示成纯文本\n"
    "助手: msgtype 要写 markdown，而且 markdown 内容放在 markdown.content 里，不是 text.content。\n"
    "用户: 改了 msgtype 就显示正常了。\n"),
    secrets=[s_wecom], query="企业微信机器人 markdown 显示成纯文本 msgtype", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# HTTP headers
# ---------------------------------------------------------------------------------------
s_ghpat = "github_pat_" + r(22) + "_" + r(59)
s_cookie = r(32)
case("en-http-headers-devtools", "en", "http-header", ingest("session", "headers.json", F.session_json(
    "devtools-headers-0517", [
        ("user", "Copied as cURL from devtools, the request works in the browser but my script gets 401:\n\n"
                 "curl 'https://api.github.com/repos/acme/infra/actions/runs?per_page=5' \\\n"
                 "  -H 'Accept: application/vnd.github+json' \\\n  -H 'Authorization: token " + s_ghpat + "' \\\n"
                 "  -H 'Cookie: _gh_sess=" + s_cookie + "; logged_in=yes' \\\n  -H 'X-GitHub-Api-Version: 2022-11-28'"),
        ("assistant", "Fine-grained tokens need the repository to be selected in the token's settings; in the browser you're authenticated by the session cookie instead."),
        ("user", "The repo wasn't in the token's list. Added it."),
    ], day=21)), secrets=[s_ghpat, s_cookie], query="script gets 401 fine-grained token repository selected",
     held=NONE_LEFT)

basic_pw = pw_sym()
s_basic = b64("grafana-admin:" + basic_pw)
case("en-basic-auth-log", "en", "http-header", ingest("transcript", "nginx.txt",
    "User: nginx in front of grafana logs this for every request from the kiosk, and the kiosk shows a login loop:\n"
    "10.4.0.31 - - [18/May/2026:07:55:02 +0000] \"GET /api/dashboards/uid/ops HTTP/1.1\" 401 hdr_auth=\"Basic " + s_basic + "\"\n"
    "Assistant: Grafana has basic auth disabled in grafana.ini ([auth.basic] enabled = false), so it rejects the header and redirects to the login page.\n"
    "User: enabled auth.basic for the kiosk org, loop is gone.\n"),
    secrets=[s_basic], query="grafana kiosk login loop basic auth disabled", held=NONE_LEFT)

s_xapikey = r(40)
case("zh-http-header-apikey", "zh", "http-header", ingest("session", "zh-header.json", F.session_json(
    "zh-apikey-header-0518", [
        ("user", "调第三方物流接口老是 401，postman 里 header 是这么填的：\nX-Api-Key: " + s_xapikey + "\nContent-Type: application/json\n\n同样的 key 用他们的 demo 就能通"),
        ("assistant", "他们的网关可能要求 key 放在 Authorization: ApiKey <key> 里，X-Api-Key 只在沙箱环境生效。看一下生产环境的接入文档。"),
        ("user", "文档里写了生产要用 Authorization 头，改完就 200 了。"),
    ], day=22)), secrets=[s_xapikey], query="第三方物流接口 401 生产环境 Authorization 头", held=NONE_LEFT)

s_bearer_zh = jwt({"sub": "u_" + r(8), "iss": "https://sso.corp.cn", "exp": 1779000000, "scope": "admin"})
case("zh-bearer-jwt-curl", "zh", "jwt", ingest("messages", "zh-jwt.jsonl", F.messages_jsonl(
    "zh-bearer-expired", [
        ("user", "curl -H \"Authorization: Bearer " + s_bearer_zh + "\" https://admin.corp.cn/api/v1/users 返回 token expired，可是我刚登录拿的"),
        ("assistant", "看一下服务器时间：如果网关机器的时钟比 SSO 快几分钟，刚签发的 token 也可能被判过期。"),
        ("user", "网关那台 ntp 挂了，时间快了 7 分钟，同步之后就好了。"),
    ], day=23)), secrets=[s_bearer_zh], query="token expired 刚登录 网关 时钟 ntp", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# cloud and SaaS keys
# ---------------------------------------------------------------------------------------
s_awsid = "AKIA" + r(16, UP)
s_awssec = r(30) + "/" + r(9)
case("en-aws-credentials-file", "en", "cloud-key", ingest("session", "aws.json", F.session_json(
    "aws-creds-0519", [
        ("user", "terraform plan works on my laptop but not in the container. I mounted this as ~/.aws/credentials:\n\n"
                 "[default]\naws_access_key_id = " + s_awsid + "\naws_secret_access_key = " + s_awssec + "\nregion = eu-west-1\n"),
        ("assistant", "`region` is not read from the credentials file by every tool; terraform's AWS provider reads it from ~/.aws/config or AWS_REGION. In the container neither is set."),
        ("user", "Set AWS_REGION in the container env and plan runs."),
    ], day=24)), secrets=[s_awsid, s_awssec], query="terraform plan container AWS_REGION credentials file",
     held=NONE_LEFT)

s_azure = r(86, B64) + "=="
case("en-azure-connstr", "en", "cloud-key", ingest("messages", "azure.jsonl", F.messages_jsonl(
    "azure-blob-logs", [
        ("user", "log shipping to blob storage fails with AuthorizationFailure. function app setting:\n"
                 "LOGS_STORAGE=DefaultEndpointsProtocol=https;AccountName=prodlogs7;AccountKey=" + s_azure + ";EndpointSuffix=core.windows.net"),
        ("assistant", "AuthorizationFailure with a valid key usually means the storage account firewall blocks the function's outbound IPs (selected networks only)."),
        ("user", "Firewall was it. Enabled the VNet integration and allowed the subnet."),
    ], day=25)), secrets=[s_azure], query="log shipping blob storage AuthorizationFailure firewall", held=NONE_LEFT)

s_aiza = "AIza" + r(35)
case("en-gmaps-key-url", "en", "cloud-key", ingest("transcript", "maps.txt",
    "User: geocoding returns REQUEST_DENIED in prod only. The call: https://maps.googleapis.com/maps/api/geocode/json?address=Berlin%20Hbf&key=" + s_aiza + "\n"
    "Assistant: REQUEST_DENIED with a key that works elsewhere points at key restrictions: an HTTP-referrer restricted key can't be used from a server.\n"
    "User: it was referrer-restricted. made a separate server key with IP restriction.\n"),
    secrets=[s_aiza], query="geocoding REQUEST_DENIED key restrictions server key", held=NONE_LEFT)

s_ltai = "LTAI5t" + r(18)
s_alisec = r(30)
case("zh-aliyun-ak", "zh", "cloud-key", ingest("session", "aliyun.json", F.session_json(
    "zh-aliyun-oss-0520", [
        ("user", "OSS 上传脚本报 SignatureDoesNotMatch。阿里云的 AccessKey ID 是 " + s_ltai + "，AccessKey Secret 是 " + s_alisec + "，用的 oss2 SDK，endpoint 写的 oss-cn-hangzhou.aliyuncs.com"),
        ("assistant", "SignatureDoesNotMatch 多半是 Secret 复制时带了空格或换行，或者 bucket 其实在别的地域。先 strip 一下再试。"),
        ("user", "确实是从 excel 复制带了个空格，去掉就好了。"),
    ], day=26)), secrets=[s_ltai, s_alisec], query="OSS 上传 SignatureDoesNotMatch 复制带空格", held=NONE_LEFT)

s_akid = "AKID" + r(32)
s_tsk = r(32)
case("zh-tencent-cos-code", "zh", "cloud-key", ingest("messages", "cos.jsonl", F.messages_jsonl(
    "zh-tencent-cos", [
        ("user", "这段代码上传 COS 一直报 AccessDenied：\n```python\nfrom qcloud_cos import CosConfig, CosS3Client\n"
                 "secret_id = '" + s_akid + "'   # 腾讯云子账号\nsecret_key = '" + s_tsk + "'\n"
                 "config = CosConfig(Region='ap-guangzhou', SecretId=secret_id, SecretKey=secret_key)\n```"),
        ("assistant", "子账号默认没有 COS 的写权限，需要在 CAM 里给它授权 QcloudCOSDataFullControl 或者自定义策略。"),
        ("user", "给子账号加了 bucket 级别的写策略之后就能传了。"),
    ], day=27)), secrets=[s_akid, s_tsk], query="上传 COS AccessDenied 子账号 CAM 授权", held=NONE_LEFT)

s_zhipu = hx(32) + "." + r(16)
case("zh-zhipu-key", "zh", "saas-token", ingest("session", "zhipu.json", F.session_json(
    "zh-zhipu-key-0521", [
        ("user", "智谱的 API Key 我填的是 " + s_zhipu + " ，调 glm-4 返回 1002 Authorization Token非法"),
        ("assistant", "智谱的 key 不能直接当 Bearer 用，老版本 SDK 要先用 id.secret 生成 JWT；新版本 SDK 会自动处理，升级一下 zhipuai 包。"),
        ("user", "升级到 2.x 之后正常了。"),
    ], day=28)), secrets=[s_zhipu], query="glm-4 1002 Authorization Token 非法 升级 SDK", held=NONE_LEFT)

s_dashscope = "sk-" + r(32, HEX)
case("zh-claude-ai-dashscope", "zh", "export", ingest("claude-ai", "conversations.json", F.claude_ai(
    uid(), "通义千问批量调用限流", [
        ("human", "帮我写个并发调用通义千问的脚本，key 我先给你：" + s_dashscope + "，模型用 qwen-plus，每秒别超过 5 个请求"),
        ("assistant", "好的，用 asyncio.Semaphore(5) 加一个每秒的令牌桶就行，key 从环境变量 DASHSCOPE_API_KEY 读，不要写在代码里。"),
        ("human", "跑起来了，不过偶尔还会 429。"),
        ("assistant", "429 的时候按响应头里的 retry-after 退避重试即可。"),
    ], day=29)), secrets=[s_dashscope], query="通义千问 并发 限流 429 退避", held=NONE_LEFT)

s_xoxb = "xoxb-" + r(12, string.digits) + "-" + r(13, string.digits) + "-" + r(24)
case("en-claude-ai-slack", "en", "export", ingest("claude-ai", "claude-export.json", F.claude_ai(
    uid(), "Slack bot missing messages", [
        ("human", "My Slack bot doesn't see messages in private channels. Bot token is " + s_xoxb + " and it has channels:history."),
        ("assistant", "Private channels need groups:history, and the bot must be invited to the channel (/invite @yourbot)."),
        ("human", "Added groups:history, reinstalled, invited it. Works."),
    ], day=30)), secrets=[s_xoxb], query="slack bot private channels groups:history invite", held=NONE_LEFT)

s_skant = "sk-ant-api03-" + r(86) + "-" + r(6) + "AA"
case("en-chatgpt-title-key", "en", "export", ingest("chatgpt", "conversations.json", F.chatgpt(
    uid(), "Anthropic key " + s_skant[:24] + " 401", [
        ("user", "Anthropic key " + s_skant + " gives 401 authentication_error from my Lambda but works with curl on my laptop"),
        ("assistant", "Check that the Lambda sends the key in the x-api-key header with the anthropic-version header, and that the environment variable has no trailing newline from the console."),
        ("user", "It had a trailing newline from the secrets manager value. Stripped it and it works."),
    ], day=31)), secrets=[s_skant, s_skant[:24]], query="Lambda 401 authentication_error trailing newline secrets manager",
     held=NONE_LEFT)

s_tg = str(R.randrange(10**9, 8 * 10**9)) + ":AA" + r(33)
case("zh-chatgpt-telegram", "zh", "export", ingest("chatgpt", "conversations-zh.json", F.chatgpt(
    uid(), "Telegram 机器人 Webhook 401", [
        ("user", "我的 Telegram 机器人 token 是 " + s_tg + " ，setWebhook 返回 401 Unauthorized，怎么回事"),
        ("assistant", "401 说明 token 本身无效：要么被 BotFather revoke 过，要么 URL 里 bot 和 token 之间少了 `bot` 前缀，应该是 https://api.telegram.org/bot<token>/setWebhook。"),
        ("user", "确实少了 bot 前缀，加上就好了。"),
    ], day=32)), secrets=[s_tg], query="Telegram 机器人 setWebhook 401 bot 前缀", agent="coder", held=NONE_LEFT)

s_npm = "npm_" + r(36)
case("en-openclaw-npmrc", "en", "transcript-tool", ingest("openclaw", "oc-npm.jsonl", F.openclaw(
    "oc-" + hx(8), [
        ("user", "npm publish fails with E403 in the release job, can you look at the runner's npmrc"),
        ("tool", "exec", {"command": "cat ~/.npmrc"}, "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=" + s_npm + "\nalways-auth=true"),
        ("assistant", "The npmrc has a token; E403 on publish with a valid token means the package requires 2FA for publish and the token is not an automation token."),
        ("user", "Created an automation token, publish works."),
    ], day=33)), secrets=[s_npm], query="npm publish E403 automation token 2FA", agent="ops-bot", held=NONE_LEFT)

s_pgpass = pw_word("Rpt")
case("zh-openclaw-pgpass", "zh", "transcript-tool", ingest("openclaw", "oc-pgpass.jsonl", F.openclaw(
    "oc-" + hx(8), [
        ("user", "报表任务连库失败，帮我看下 report 用户的 .pgpass 配得对不对"),
        ("tool", "exec", {"command": "cat ~/.pgpass && ls -l ~/.pgpass"},
         "db.internal:5432:*:report:" + s_pgpass + "\n-rw-r--r-- 1 report report 41 May 20 10:02 /home/report/.pgpass"),
        ("assistant", ".pgpass 的权限是 644，libpq 会直接忽略权限比 0600 宽的文件，所以等于没配密码。chmod 600 就行。"),
        ("user", "改成 600 之后报表任务连上了。"),
    ], day=34)), secrets=[s_pgpass], query="报表任务 连库失败 pgpass 权限 600", held=NONE_LEFT)

s_hf = "hf_" + r(34)
cc2 = "0c8f2a6e-31d4-4b59-8e27-" + hx(12)
case("en-cc-hf-login", "en", "transcript-tool", ingest("claude-code", cc2 + ".jsonl", F.claude_code(cc2, [
    ("user", "download the llama weights for the eval box, it says gated repo"),
    ("tool", "Bash", {"command": "huggingface-cli login --token " + s_hf + " && huggingface-cli download meta-llama/Llama-3.1-8B-Instruct --local-dir /data/models/llama31"},
     "Token is valid (permission: read).\nYour token has been saved to /root/.cache/huggingface/token\nCannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct. Access to model is restricted."),
    ("assistant", "The token is valid, but the account hasn't been granted access to the gated Llama repo. Request access on the model page first."),
    ("user", "approved now, download is running"),
], day=35, cwd="/srv/eval")), secrets=[s_hf], query="gated repo llama download access request", agent="coder", held=NONE_LEFT)

s_kubectl = pw_sym()
cc3 = "5a91c0de-8f27-4d3b-a6e1-" + hx(12)
case("zh-cc-kubectl-secret", "zh", "transcript-tool", ingest("claude-code", cc3 + ".jsonl", F.claude_code(cc3, [
    ("user", "帮我查一下为什么 order-svc 连不上 Redis，先看看 secret 里的密码和 redis 配置是不是一致"),
    ("tool", "Bash", {"command": "kubectl -n prod get secret redis-auth -o jsonpath='{.data.password}' | base64 -d"}, s_kubectl),
    ("tool", "Bash", {"command": "kubectl -n prod exec redis-0 -- grep requirepass /etc/redis/redis.conf"}, "requirepass " + s_kubectl),
    ("assistant", "secret 里的密码和 redis.conf 的 requirepass 是一致的，所以不是密码问题；order-svc 的 NetworkPolicy 没放行 6379 端口。"),
    ("user", "加了 NetworkPolicy 规则，连上了"),
], day=36, cwd="/home/dev/order-svc")), secrets=[s_kubectl], query="order-svc 连不上 Redis NetworkPolicy 6379",
     held=NONE_LEFT)

s_wx = hx(32)
cc4 = "e27b4c19-6a0d-4f83-b2c5-" + hx(12)
case("zh-cc-write-env", "zh", "transcript-tool", ingest("claude-code", cc4 + ".jsonl", F.claude_code(cc4, [
    ("user", "小程序登录 code2session 一直返回 40125，帮我把 appsecret 更新到 .env.prod 里，新的是 " + s_wx),
    ("tool", "Write", {"file_path": "/home/dev/mp-api/.env.prod", "content": "WX_APPID=wx8f3c2a1b9d7e6f50\nWX_APPSECRET=" + s_wx + "\nAPI_PORT=9000\n"},
     "File created successfully at: /home/dev/mp-api/.env.prod"),
    ("assistant", "已经写入 .env.prod。40125 是 appsecret 无效，重启服务让新的 secret 生效后再试。"),
    ("user", "重启之后 code2session 正常返回 openid 了"),
], day=37, cwd="/home/dev/mp-api")), secrets=[s_wx], query="小程序登录 code2session 40125 appsecret 重启",
     agent="coder", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# JWTs, private keys, MFA seeds
# ---------------------------------------------------------------------------------------
s_jwt_log = jwt({"sub": "svc-reporting", "aud": "billing-api", "iat": 1778400000, "exp": 1778403600,
                 "jti": r(12)})
case("en-jwt-in-log", "en", "jwt", ingest("session", "jwtlog.json", F.session_json(
    "jwt-log-0522", [
        ("user", "billing-api rejects the reporting service's calls. From the gateway log:\n"
                 "2026-05-22T10:11:12Z WARN authz: rejected bearer " + s_jwt_log + " reason=aud_mismatch route=/v2/invoices"),
        ("assistant", "aud_mismatch: the token's audience must match what billing-api expects. If billing-api was renamed to billing-api-v2 in its config, tokens minted for billing-api are rejected."),
        ("user", "Yes, the audience config was changed in the last release. Reverted it."),
    ], day=38)), secrets=[s_jwt_log], query="billing-api rejects reporting service aud_mismatch audience",
     held=NONE_LEFT)

kube_tok = jwt({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ci:deployer",
                "kubernetes.io/serviceaccount/namespace": "ci"})
case("en-kubeconfig-token", "en", "jwt", ingest("transcript", "kubeconfig.txt",
    "User: helm upgrade from the CI runner says Unauthorized. the runner's kubeconfig:\n"
    "users:\n- name: deployer\n  user:\n    token: " + kube_tok + "\n"
    "Assistant: Since Kubernetes 1.24 service account token secrets are no longer created automatically; if the old secret was deleted during the upgrade, that token is dead. Create a token with `kubectl create token deployer -n ci --duration 8760h` or a bound secret.\n"
    "User: the cluster was upgraded to 1.29 last week, that explains it. new token works.\n"),
    secrets=[kube_tok], query="helm upgrade CI Unauthorized service account token", held=NONE_LEFT)

gcp_body = pem_lines(6)
gcp_key = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(gcp_body) + "\\n-----END PRIVATE KEY-----\\n"
case("en-gcp-service-account-json", "en", "private-key", ingest("session", "gcp.json", F.session_json(
    "gcp-sa-0523", [
        ("user", "BigQuery job from airflow says invalid_grant: Invalid JWT Signature. this is the key file (sa-airflow.json):\n"
                 "{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-data-prod\",\n  \"private_key_id\": \"" + hx(40) + "\",\n"
                 "  \"private_key\": \"" + gcp_key + "\",\n  \"client_email\": \"airflow@acme-data-prod.iam.gserviceaccount.com\"\n}"),
        ("assistant", "Invalid JWT Signature means that key was deleted or disabled in IAM — the private_key_id is no longer listed for the service account."),
        ("user", "Someone rotated keys on Friday. Uploaded the new key to the Airflow connection."),
    ], day=39)), secrets=[gcp_body[1], gcp_body[3], gcp_body[5]], query="BigQuery airflow invalid_grant Invalid JWT Signature key rotated",
     held=NONE_LEFT)

ssh_body = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"] + pem_lines(6, 70)
case("en-ssh-key-split-turns", "en", "private-key", ingest("messages", "deploykey.json", F.messages_list([
    ("user", "the chat cut off my paste, sending the deploy key in two parts. part 1:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(ssh_body[:4])),
    ("assistant", "Got part 1, send the rest."),
    ("user", "part 2:\n" + "\n".join(ssh_body[4:]) + "\n-----END OPENSSH PRIVATE KEY-----\nit's the key for deploy@ci-runner, git clone says Permission denied (publickey)"),
    ("assistant", "Check that the matching public key is added as a deploy key on the repository, and that the file has mode 600 on the runner."),
])), secrets=[ssh_body[2], ssh_body[3], ssh_body[5], ssh_body[6]], query="deploy key git clone Permission denied publickey",
     held=NONE_LEFT)

rsa_body = pem_lines(8)
case("zh-rsa-key-split-turns", "zh", "private-key", ingest("session", "rsa-zh.json", F.session_json(
    "zh-rsa-split-0524", [
        ("user", "私钥太长了我分两条发，这是支付宝应用私钥的前半段：\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rsa_body[:4])),
        ("assistant", "收到，继续发后半段吧。"),
        ("user", "接上条：\n" + "\n".join(rsa_body[4:]) + "\n-----END RSA PRIVATE KEY-----\n现在验签一直失败，报 invalid-signature"),
        ("assistant", "支付宝 SDK 要的是 PKCS8 格式的私钥，你这个是 PKCS1（BEGIN RSA PRIVATE KEY），用 openssl pkcs8 -topk8 转一下。"),
        ("user", "转成 PKCS8 之后验签通过了。"),
    ], day=40)), secrets=[rsa_body[1], rsa_body[2], rsa_body[5], rsa_body[7]], query="支付宝 验签失败 invalid-signature PKCS8",
     held=NONE_LEFT)

s_totp = r(32, B32)
case("en-totp-seed", "en", "other-secret", ingest("session", "totp.json", F.session_json(
    "totp-root-0525", [
        ("user", "The AWS root MFA is on the old phone that died. Luckily I kept the setup URI: otpauth://totp/Amazon%20Web%20Services:root@acme?secret=" + s_totp + "&issuer=Amazon%20Web%20Services . Can I just put it in a new authenticator?"),
        ("assistant", "Yes, the seed in that URI is all an authenticator needs; add it on the new phone, then re-register MFA to get a fresh seed since this one has now been exposed in chat."),
        ("user", "Done, re-registered MFA for root."),
    ], day=41)), secrets=[s_totp], query="AWS root MFA old phone authenticator re-register", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# phrases: English and Chinese word order, distance, punctuation
# ---------------------------------------------------------------------------------------
s_rev_en = pw_dash()
case("en-phrase-value-first", "en", "phrase", ingest("session", "grafana-pass.json", F.session_json(
    "grafana-admin-0526", [
        ("user", "Use " + s_rev_en + " — that's what the staging Grafana admin login is now, I reset it this morning. Don't put it in the wiki. Can you check why the Loki datasource shows no logs?"),
        ("assistant", "Loki shows no logs when the query's time range is beyond the retention; staging keeps 72h. Also check the tenant header X-Scope-OrgID."),
        ("user", "It was the tenant header. Fixed."),
    ], day=42)), secrets=[s_rev_en], query="staging Grafana Loki datasource no logs tenant header", held=NONE_LEFT)

s_punct_en = r(5) + "!" + r(4) + "#"
case("en-phrase-trailing-punct", "en", "phrase", ingest("transcript", "vpn.txt",
    "User: new hire can't get on the VPN (her password: " + s_punct_en + "). She's on macOS 15, Tunnelblick says TLS handshake failed.\n"
    "Assistant: A TLS handshake failure is about certificates, not the password: her profile probably still has the old CA that expired on May 1.\n"
    "User: correct, old profile. re-sent the new .ovpn and she's connected.\n"),
    secrets=[s_punct_en], query="new hire VPN TLS handshake failed old CA profile", held=NONE_LEFT)

s_far_en = r(14)
case("en-phrase-far-apart", "en", "phrase", ingest("messages", "wifi-en.jsonl", F.messages_jsonl(
    "office-wifi-guest", [
        ("user", "For the offsite next week the guest network credentials the venue sent are: network Acme-Guest, and for the password they wrote the following, case sensitive, no spaces, I double checked it twice with them on the phone:\n\n" + s_far_en + "\n\nCan you add the offsite to the team calendar for June 3?"),
        ("assistant", "Added the offsite on June 3 to the team calendar."),
    ], day=43)), secrets=[s_far_en], query="offsite next week team calendar June 3 venue", held=NONE_LEFT)

s_rev_zh = pw_sym()
case("zh-phrase-value-first", "zh", "phrase", ingest("session", "zh-rev.json", F.session_json(
    "zh-mysql-root-0527", [
        ("user", s_rev_zh + " 这个就是生产 MySQL 的 root 密码，千万别发群里。你帮我看看慢查询日志为什么没有记录"),
        ("assistant", "检查一下 slow_query_log 是不是 ON，long_query_time 是不是设得太大，还有 log_output 是 FILE 还是 TABLE。"),
        ("user", "long_query_time 是 10 秒，改成 1 秒之后就有记录了。"),
    ], day=44)), secrets=[s_rev_zh], query="慢查询日志 没有记录 long_query_time", held=NONE_LEFT)

s_far_zh = pw_year()
case("zh-phrase-far-apart", "zh", "phrase", ingest("messages", "zh-far.jsonl", F.messages_jsonl(
    "zh-qa-login", [
        ("user", "测试环境的登录账号是 qa_admin，密码的话我上周五下班前统一改过一次了，群公告里那个是旧的，现在是（注意区分大小写，别带空格）" + s_far_zh + "，今天下午回归测试要用"),
        ("assistant", "好的，回归测试用 qa_admin 登录测试环境。"),
        ("user", "另外回归测试下午 3 点开始，记一下。"),
    ], day=45)), secrets=[s_far_zh], query="回归测试 下午 3 点 测试环境 登录账号", held=NONE_LEFT)

s_fw_zh = r(6) + "." + r(6)
case("zh-fullwidth-quotes", "zh", "phrase", ingest("transcript", "zh-fw.txt",
    "用户: 生产 Redis 的密码：「" + s_fw_zh + "」。哨兵那边也要同步改，不然故障切换后新主库连不上。\n"
    "助手: 对，sentinel.conf 里的 sentinel auth-pass 也要改成新的，而且每个哨兵都要改，然后 SENTINEL RESET。\n"
    "用户: 三个哨兵都改完了，切换演练也没问题。\n"),
    secrets=[s_fw_zh], query="哨兵 auth-pass 故障切换 演练", held=NONE_LEFT)

s_nospace_zh = "glpat-" + r(20)
case("zh-token-no-space-comma", "zh", "phrase", ingest("session", "zh-nospace.json", F.session_json(
    "zh-gitlab-token-0528", [
        ("user", "gitlab 的 token是" + s_nospace_zh + "，今天到期，帮我记一下下周要换新的，另外 renovate 机器人也用的这个"),
        ("assistant", "好的，下周提醒你更换 GitLab token，renovate 机器人的配置也要同步更新。"),
    ], day=46)), secrets=[s_nospace_zh], query="下周 更换 GitLab token renovate 机器人", held=NONE_LEFT)

s_slash1 = pw_sym()
case("zh-root-slash-pair", "zh", "phrase", ingest("messages", "zh-slash.jsonl", F.messages_jsonl(
    "zh-jump-host", [
        ("user", "新上架的那台 10.3.8.21 账号密码 root/" + s_slash1 + " ，先别改，下午交给安全组做基线检查"),
        ("assistant", "好的，10.3.8.21 下午交给安全组做基线检查，检查完建议立刻改密码并禁用 root 远程登录。"),
        ("user", "嗯，检查完就改成密钥登录。"),
    ], day=47)), secrets=[s_slash1], query="10.3.8.21 基线检查 安全组 密钥登录", held=NONE_LEFT)

s_tbl_dev = pw_dash()
s_tbl_prod = pw_word("Prod")
case("zh-markdown-table", "zh", "phrase", ingest("session", "zh-table.json", F.session_json(
    "zh-env-table-0529", [
        ("user", "交接文档里各环境的 rabbitmq 信息，你帮我整理一下哪些队列没有消费者：\n\n"
                 "| 环境 | 地址 | 账号 | 密码 |\n|---|---|---|---|\n"
                 "| dev | 10.9.1.5:5672 | mq_dev | " + s_tbl_dev + " |\n| prod | 10.9.9.5:5672 | mq_prod | " + s_tbl_prod + " |\n\n"
                 "prod 上 order.created 队列积压了 12 万条"),
        ("assistant", "order.created 积压是因为消费者 order-worker 上周缩容到 0 了，扩回 3 个副本即可。"),
        ("user", "扩回去以后积压在 20 分钟内清掉了。"),
    ], day=48)), secrets=[s_tbl_dev, s_tbl_prod], query="rabbitmq order.created 积压 order-worker 扩容",
     held=NONE_LEFT)

s_lines_zh = r(7) + "%" + r(5)
case("zh-value-on-own-line", "zh", "phrase", ingest("transcript", "zh-lines.txt",
    "用户: 堡垒机的运维账号：ops_zhao\n（密码在下面一行，复制的时候别带空格）\n\n" + s_lines_zh + "\n\n帮我看下为什么上面的 ansible 剧本跑到 gather facts 就卡住\n"
    "助手: gather facts 卡住通常是某台机器上 df 命令挂在失效的 NFS 挂载点上，加上 gather_timeout 或者先 umount -l 那个挂载点。\n"
    "用户: 是 NFS 挂载点的问题，umount 之后剧本跑完了。\n"),
    secrets=[s_lines_zh], query="ansible gather facts 卡住 NFS 挂载点", held=NONE_LEFT)

s_wifi_zh = r(10)
case("zh-wifi-capture-file", "zh", "phrase", {"via": "capture-file", "file_name": "zh-office-chat.jsonl",
    "file_text": F.capture_lines([
        ("user", "下周一新同事入职，公司访客 WiFi 叫 Corp-Guest，密码是 " + s_wifi_zh + " ，帮我记到入职清单里"),
        ("assistant", "好的，已经记到入职清单：下周一新同事入职，访客 WiFi 为 Corp-Guest。"),
    ], day=49, prefix="w")}, secrets=[s_wifi_zh], query="下周一 新同事入职 入职清单 访客 WiFi", agent="ops-bot", held=NONE_LEFT)

s_kouling = "Kl" + r(8) + "9"
case("zh-kouling-paren", "zh", "phrase", ingest("session", "zh-kl.json", F.session_json(
    "zh-vpn-kouling-0530", [
        ("user", "VPN 口令（动态口令挂了，先用静态的）：" + s_kouling + "；今晚 23 点割接，需要 DBA 在线"),
        ("assistant", "好的，今晚 23 点割接，需要 DBA 在线。"),
    ], day=50)), secrets=[s_kouling], query="今晚 23 点 割接 DBA 在线", held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# a token inside a session id or a file name
# ---------------------------------------------------------------------------------------
s_fname = "ghp_" + r(36)
case("en-token-in-file-name", "en", "id-or-filename", ingest("transcript", "run-" + s_fname + ".txt",
    "User: our release script did `tee run-$GITHUB_TOKEN.txt` by mistake, so the log file got that name. Anyway, the release step failed with `tag v3.8.0 already exists`.\n"
    "Assistant: The tag exists because the previous run pushed it before failing at the upload step. Delete the remote tag or bump to v3.8.1.\n"
    "User: bumped to 3.8.1 and fixed the tee line.\n"),
    secrets=[s_fname], query="release script tag already exists bump v3.8.1", held=NONE_LEFT)

s_tg_key = str(R.randrange(10**9, 8 * 10**9)) + ":AA" + r(33)
case("en-token-in-session-key", "en", "id-or-filename", ingest("messages", "tgbot.jsonl", F.messages_jsonl(
    "tg:" + s_tg_key + ":chat:5512", [
        ("user", "the bot answers in the group but not in DMs"),
        ("assistant", "Privacy mode doesn't affect DMs; check that your update handler doesn't filter on chat.type == 'group'."),
        ("user", "it did filter on group. removed the filter, DMs work"),
    ], day=51)), secrets=[s_tg_key], query="bot answers group not DMs chat.type filter", held=NONE_LEFT)

s_cijob = "glcbt-64_" + r(20)
case("zh-token-in-capture-session", "zh", "id-or-filename", {"via": "capture-stdin",
    "session": "deploy-" + s_cijob,
    "stdin": F.capture_lines([
        ("user", "部署流水线的 session id 是用 CI_JOB_TOKEN 拼的，先不管。helm 回滚到上一版之后，前端还是白屏"),
        ("assistant", "白屏多半是 CDN 缓存了新版本的 index.html，回滚后要刷新 CDN 缓存。"),
        ("user", "刷新 CDN 之后正常了。"),
    ], day=52, prefix="d")}, secrets=[s_cijob], query="helm 回滚 前端 白屏 CDN 缓存", agent="ops-bot", held=NONE_LEFT)

s_ingest_stdin = pw_sym()
case("en-ingest-stdin-transcript", "en", "cli-password", {"via": "ingest-stdin", "stdin":
    "User: ftp upload to the printer vendor fails: lftp -u acme_upload," + s_ingest_stdin + " sftp://files.printvendor.example -e 'put proofs.zip; bye'\n"
    "Assistant: If it's sftp, lftp needs the host key accepted first; run it once interactively or set sftp:auto-confirm yes.\n"
    "User: sftp:auto-confirm did it.\n"}, secrets=[s_ingest_stdin], query="lftp sftp upload printer vendor auto-confirm",
     held=NONE_LEFT)

s_capstdin_en = "SG." + r(22) + "." + r(43)
case("en-capture-stdin-sendgrid", "en", "saas-token", {"via": "capture-stdin", "session": "mailer-debug-0531",
    "stdin": F.capture_lines([
        ("user", "password reset emails stopped. The mailer has SENDGRID_API_KEY=" + s_capstdin_en + " and the activity feed shows nothing"),
        ("assistant", "Nothing in the activity feed means the requests never reach SendGrid: check the mailer logs for a 401/403 or a DNS failure."),
        ("user", "mailer logs show 403: the key lost mail.send permission when someone edited it. Fixed the key permissions."),
    ], day=53, prefix="s")}, secrets=[s_capstdin_en], query="password reset emails stopped mailer 403 mail.send permission",
     held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# agents' own writes (CLI): new, new -, link --reason, feedback
# ---------------------------------------------------------------------------------------
s_new_en = pw_year()
case("en-new-flags-claim", "en", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "Staging Grafana admin login", "--type", "fact", "--tag", "grafana,staging",
     "--claim", "The staging Grafana admin password is " + s_new_en + " since the May reset",
     "--body", "Login at https://grafana.staging.internal as admin / " + s_new_en + ". Rotate after the audit."]],
    "refs": ["Staging Grafana admin login"]}, agent="ops-bot", secrets=[s_new_en],
     query="staging Grafana admin login", held=NONE_LEFT)

s_new_json_aws = r(30) + "/" + r(9)
s_new_json_id = "AKIA" + r(16, UP)
case("en-new-json-terraform", "en", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "Terraform state bucket", "--type", "fact", "--claim", "Terraform state lives in s3://acme-tfstate-prod"],
    ["new", "-", "--json", {"stdin": json.dumps({
        "title": "CI deploy user for terraform", "type": "fact", "tags": ["terraform", "ci"],
        "content": "From `terraform output -json`:\n\n```json\n{\"ci_access_key_id\": {\"value\": \"" + s_new_json_id + "\"}, \"ci_secret_access_key\": {\"value\": \"" + s_new_json_aws + "\", \"sensitive\": true}}\n```",
        "claims": [{"text": "The CI deploy user's secret access key is " + s_new_json_aws, "confidence": 0.9}],
        "relations": [{"type": "DEPENDS_ON", "target": "Terraform state bucket",
                       "reason": "writes state with key " + s_new_json_id}]})}]],
    "refs": ["CI deploy user for terraform"]}, agent="ops-bot", secrets=[s_new_json_aws, s_new_json_id],
     query="CI deploy user terraform", held=NONE_LEFT)

s_link_en = "SG." + r(22) + "." + r(43)
case("en-link-reason", "en", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "Transactional mail service", "--type", "concept", "--claim", "Receipts and password resets go through the mail service"],
    ["new", "--title", "Marketing newsletter sender", "--type", "concept", "--claim", "The newsletter is sent from the marketing worker"],
    ["link", "Marketing newsletter sender", "Transactional mail service", "--rel", "DEPENDS_ON", "--weight", "0.7",
     "--reason", "both send with the same SendGrid key " + s_link_en]],
    "refs": ["Marketing newsletter sender", "Transactional mail service"]}, agent="ops-bot",
     secrets=[s_link_en], query="marketing newsletter transactional mail service", held=NONE_LEFT)

s_fb_en = pw_dash()
case("en-feedback-correct", "en", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "SMTP relay credentials", "--type", "fact", "--claim", "The SMTP relay is smtp.relay.internal on port 587"],
    ["feedback", "correct", "SMTP relay credentials", "--claim", "c1",
     "--text", "The SMTP relay is smtp.relay.internal:587, user relay-app, password " + s_fb_en + " (rotated May 3)"]],
    "refs": ["SMTP relay credentials"]}, agent="ops-bot", secrets=[s_fb_en],
     query="SMTP relay credentials", held=NONE_LEFT)

s_dep_en = "hf_" + r(34)
case("en-feedback-deprecate-reason", "en", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "Eval box HF token location", "--type", "fact", "--claim", "The eval box reads its HF token from /root/.cache/huggingface/token"],
    ["feedback", "deprecate", "Eval box HF token location", "--reason",
     "replaced the classic token " + s_dep_en + " with a fine-grained one, path changed"]],
    "refs": []}, agent="ops-bot", secrets=[s_dep_en], query="eval box HF token location", held=NONE_LEFT)

s_new_zh = pw_sym()
case("zh-new-flags-body", "zh", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "跳板机登录方式", "--type", "fact", "--tag", "堡垒机,运维",
     "--body", "堡垒机 jump.corp.cn：用户 ops，口令 " + s_new_zh + "，需要先连公司 VPN。",
     "--claim", "跳板机需要先连公司 VPN，用户名 ops，登录口令为 " + s_new_zh]],
    "refs": ["跳板机登录方式"]}, agent="ops-bot", secrets=[s_new_zh], query="跳板机 登录方式 堡垒机",
     held=NONE_LEFT)

s_new_json_zh = r(30)
case("zh-new-json-oss", "zh", "agent-write", {"via": "cli", "steps": [
    ["new", "-", "--json", {"stdin": json.dumps({
        "title": "图片上传 OSS 的访问凭证", "type": "fact", "tags": ["oss", "上传"],
        "content": "上传服务用子账号 upload-bot，AccessKey Secret：" + s_new_json_zh + "（2026 年 5 月创建）",
        "claims": [{"text": "图片上传服务的 AccessKey Secret 为 " + s_new_json_zh, "confidence": 0.8}],
        "aliases": ["OSS 上传凭证"]}, ensure_ascii=False)}]],
    "refs": ["图片上传 OSS 的访问凭证"]}, agent="coder", secrets=[s_new_json_zh],
     query="图片上传 OSS 访问凭证", held=NONE_LEFT)

s_link_zh = pw_word("Cache")
case("zh-link-reason", "zh", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "商品详情缓存", "--type", "concept", "--claim", "商品详情页的数据缓存在 redis-cache 集群"],
    ["new", "--title", "购物车服务", "--type", "concept", "--claim", "购物车数据也存在 redis-cache 集群"],
    ["link", "购物车服务", "商品详情缓存", "--rel", "DEPENDS_ON", "--reason", "两者共用同一个 Redis，密码是 " + s_link_zh + "，改密码要一起改"]],
    "refs": ["购物车服务", "商品详情缓存"]}, agent="coder", secrets=[s_link_zh],
     query="购物车服务 商品详情缓存 redis", held=NONE_LEFT)

s_fb_zh = r(32)
case("zh-feedback-correct", "zh", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "支付回调签名方式", "--type", "fact", "--claim", "支付回调用 HMAC-SHA256 签名"],
    ["feedback", "correct", "支付回调签名方式", "--claim", "c1",
     "--text", "支付回调用 HMAC-SHA256 签名，签名密钥已经换成 " + s_fb_zh + " 了"]],
    "refs": ["支付回调签名方式"]}, agent="coder", secrets=[s_fb_zh], query="支付回调 签名方式 HMAC",
     held=NONE_LEFT)

s_fb_useful_zh = "ghp_" + r(36)
case("zh-feedback-useful-reason", "zh", "agent-write", {"via": "cli", "steps": [
    ["new", "--title", "私有仓库拉取方式", "--type", "pattern", "--claim", "拉私有仓库要用带 repo 权限的 token"],
    ["feedback", "useful", "私有仓库拉取方式", "--reason", "有用，用 " + s_fb_useful_zh + " 这个 token 拉下来了"]],
    "refs": ["私有仓库拉取方式"]}, agent="coder", secrets=[s_fb_useful_zh], query="私有仓库 拉取 token",
     held=NONE_LEFT)

# ---------------------------------------------------------------------------------------
# MCP tools (one server per run, as agent ops-bot)
# ---------------------------------------------------------------------------------------
s_mcp_new = "ghp_" + r(36)
case("en-mcp-new", "en", "mcp", {"via": "mcp", "calls": [
    {"tool": "new", "arguments": {"title": "Renovate bot GitHub access", "type": "fact",
                                  "content": "Renovate runs as the renovate-acme app; fallback PAT " + s_mcp_new + " (repo scope) if the app install breaks.",
                                  "claims": ["Renovate's fallback PAT is " + s_mcp_new],
                                  "tags": ["renovate", "github"]}}],
    "refs": ["Renovate bot GitHub access"]}, agent="ops-bot", secrets=[s_mcp_new],
     query="Renovate bot GitHub access", held=NONE_LEFT)

s_mcp_ingest = "rk_live_" + r(24)
case("en-mcp-ingest", "en", "mcp", {"via": "mcp", "calls": [
    {"tool": "ingest", "arguments": {"session": {"id": "mcp-stripe-restricted-0601", "timestamp": "2026-06-01T08:00:00Z", "channel": "slack",
        "turns": [{"role": "user", "content": "The refunds worker uses the restricted key " + s_mcp_ingest + " and gets 'The provided key does not have the required permissions' on POST /v1/refunds"},
                  {"role": "assistant", "content": "Restricted keys need Refunds: write explicitly; add that permission to the key in the dashboard."},
                  {"role": "user", "content": "Added Refunds write, the worker processes refunds again."}]}}},
    {"tool": "distill", "arguments": {"session": "mcp-stripe-restricted-0601"}}],
    "refs": ["mcp-stripe-restricted-0601"]}, agent="ops-bot", secrets=[s_mcp_ingest],
     query="refunds worker restricted key permissions", held=NONE_LEFT)

s_mcp_link = pw_sym()
case("zh-mcp-link-reason", "zh", "mcp", {"via": "mcp", "calls": [
    {"tool": "new", "arguments": {"title": "日志平台 ES 集群", "type": "concept", "claims": ["日志平台用的是 es-log 集群"]}},
    {"tool": "new", "arguments": {"title": "审计日志归档任务", "type": "concept", "claims": ["审计日志每天凌晨归档到 es-log"]}},
    {"tool": "link", "arguments": {"a": "审计日志归档任务", "b": "日志平台 ES 集群", "rel": "DEPENDS_ON",
                                   "reason": "归档任务用 elastic 账号写入，密码 " + s_mcp_link}}],
    "refs": ["审计日志归档任务", "日志平台 ES 集群"]}, agent="ops-bot", secrets=[s_mcp_link],
     query="审计日志归档任务 ES 集群", held=NONE_LEFT)

s_mcp_fb = pw_dash()
case("zh-mcp-feedback-correct", "zh", "mcp", {"via": "mcp", "calls": [
    {"tool": "new", "arguments": {"title": "Nacos 控制台账号", "type": "fact", "claims": ["Nacos 控制台地址是 nacos.corp.cn:8848"]}},
    {"tool": "feedback", "arguments": {"verdict": "correct", "id": "Nacos 控制台账号", "claim": "c1",
                                       "text": "Nacos 控制台地址是 nacos.corp.cn:8848，账号 nacos，密码改成了 " + s_mcp_fb}}],
    "refs": ["Nacos 控制台账号"]}, agent="ops-bot", secrets=[s_mcp_fb], query="Nacos 控制台账号",
     held=NONE_LEFT)

s_mcp_recall = pw_sym()
case("zh-mcp-recall-query", "zh", "recall-query", {"via": "mcp", "calls": [
    {"tool": "recall", "arguments": {"query": "数据库密码 " + s_mcp_recall + " 登录失败，之前有没有遇到过", "top_k": 5}, "echo": True},
    {"tool": "context", "arguments": {"query": "用密码 " + s_mcp_recall + " 连 mysql 报 1045", "budget": 2000}, "echo": True}],
    "refs": []}, agent="ops-bot", secrets=[s_mcp_recall], query="数据库 登录失败 1045",
     held="the query is not kept: no fragment in .alaya/ (telemetry), git, files, or later reads/reports")

# ---------------------------------------------------------------------------------------
# the recall query itself
# ---------------------------------------------------------------------------------------
s_rq_en = "sk-proj-" + r(48) + "-" + r(20)
case("en-recall-query", "en", "recall-query", {"via": "cli", "steps": [
    ["recall", "my api key is " + s_rq_en + " — where did I configure it for the eval box?", "--json", {"echo": True}]],
    "refs": []}, agent="coder", secrets=[s_rq_en], query="eval box api key configuration",
     held="the query is not kept: no fragment in .alaya/ (telemetry), git, files, or later reads/reports")

s_rq_save = pw_year()
case("en-recall-save", "en", "recall-query", {"via": "cli", "steps": [
    ["recall", "postgres password " + s_rq_save + " rejected after failover", "--save", {"echo": True}]],
    "refs": []}, agent=None, secrets=[s_rq_save], query="postgres password rejected after failover",
     held="the saved query note and its commit hold no fragment of the value")

s_rq_zh = "sk-" + hx(32)
case("zh-recall-query", "zh", "recall-query", {"via": "cli", "steps": [
    ["recall", "我的 api key 是 " + s_rq_zh + "，之前存在哪个配置文件里了？", "--json", {"echo": True}]],
    "refs": []}, agent="coder", secrets=[s_rq_zh], query="api key 配置文件",
     held="the query is not kept: no fragment in .alaya/ (telemetry), git, files, or later reads/reports")

s_ctx_zh = "ghp_" + r(36)
case("zh-context-query", "zh", "recall-query", {"via": "cli", "steps": [
    ["context", "--query", "用 token " + s_ctx_zh + " 拉私有仓库 403 怎么办", "--budget", "2000", "--json", {"echo": True}]],
    "refs": []}, agent="coder", secrets=[s_ctx_zh], query="拉私有仓库 403",
     held="the query is not kept: no fragment in .alaya/ (telemetry), git, files, or later reads/reports")

s_serve = "xoxp-" + r(11, string.digits) + "-" + r(12, string.digits) + "-" + r(13, string.digits) + "-" + hx(32)
case("en-serve-recall-query", "en", "recall-query", {"via": "serve", "requests": [
    {"path": "/recall", "headers": {"X-Alaya-Agent": "ops-bot"},
     "body": {"query": "slack user token " + s_serve + " stopped working after workspace migration", "top_k": 5}, "echo": True}],
    "refs": []}, agent="ops-bot", secrets=[s_serve], query="slack user token workspace migration",
     held="the query is not kept: no fragment in .alaya/, serve's log, git, files, or later reads/reports")

# ---------------------------------------------------------------------------------------
# negatives: look-alikes that hold no credential (held = kept intact in the session note)
# ---------------------------------------------------------------------------------------
KEPT = "the text is kept intact in the session note: every kept fragment present, nothing [REDACTED]"


def neg(cid, lang, text, keep, query, fmt="session", reply=None):
    reply = reply or ("Noted." if lang == "en" else "好的，记下了。")
    sid = cid.replace("neg-", "n-")
    if fmt == "session":
        inp = ingest("session", sid + ".json", F.session_json(sid, [("user", text), ("assistant", reply)],
                                                              day=60 + len(CASES) % 20))
    elif fmt == "messages":
        inp = ingest("messages", sid + ".jsonl", F.messages_jsonl(sid, [("user", text), ("assistant", reply)],
                                                                 day=61))
    else:
        cc = str(uuid.UUID(int=R.getrandbits(128), version=4))
        inp = ingest("claude-code", cc + ".jsonl", F.claude_code(cc, [("user", text), ("assistant", reply)], day=62))
    case(cid, lang, "negative", inp, keep=keep, query=query, held=KEPT)


neg("neg-en-required-field", "en",
    "Signup fails with `400 Bad Request: field \"password\" is required` when the mobile app sends an empty form.",
    ["field \"password\" is required"], "signup fails 400 mobile app empty form")
neg("neg-en-is-password-right", "en",
    "Can you check whether the password I typed for the demo box was the right one? It keeps saying invalid credentials after three tries.",
    ["whether the password I typed for the demo box was the right one"], "demo box invalid credentials")
neg("neg-en-env-placeholder", "en",
    "In docker-compose we pass it through as OPENAI_API_KEY=${OPENAI_API_KEY:?set it in your shell} so nothing is hard-coded.",
    ["OPENAI_API_KEY=${OPENAI_API_KEY:?set it in your shell}"], "docker-compose pass through api key shell")
neg("neg-en-template-token", "en",
    "The README template says api_token: <your-token-here> and people keep committing it unchanged; the CI lint should catch that line.",
    ["api_token: <your-token-here>"], "README template token CI lint")
neg("neg-en-git-sha", "en",
    "The regression came in with commit 9c4e1f7a2b3d5e6f708192a3b4c5d6e7f8091a2b, revert that one first.",
    ["9c4e1f7a2b3d5e6f708192a3b4c5d6e7f8091a2b"], "regression commit revert", fmt="messages")
neg("neg-en-ticket-uuid", "en",
    "Ticket 3f2b8c1e-6d4a-4b7e-9a10-5c8d2e7f1b46 is the one about the SSO session timeout, link it in the postmortem.",
    ["3f2b8c1e-6d4a-4b7e-9a10-5c8d2e7f1b46"], "ticket SSO session timeout postmortem")
neg("neg-en-max-tokens", "en",
    "Set max_tokens=4096 and temperature=0.2 for the summarizer; the 128k context is plenty.",
    ["max_tokens=4096", "temperature=0.2"], "summarizer max tokens temperature", fmt="claude-code")
neg("neg-en-ports-vault-path", "en",
    "Postgres listens on 5432 and pgbouncer on 6432; the password lives in Vault at kv/prod/pg, nobody should paste it.",
    ["pgbouncer on 6432", "kv/prod/pg"], "postgres pgbouncer port vault path")
neg("neg-en-versions", "en",
    "After upgrading to openssl 3.0.13 and requests 2.32.3 the OAuth token refresh works again.",
    ["openssl 3.0.13", "requests 2.32.3"], "openssl upgrade token refresh")
neg("neg-en-settings", "en",
    "Our policy settings are PASSWORD_MIN_LENGTH=12 and TOKEN_TTL_SECONDS=3600, both enforced by the auth service.",
    ["PASSWORD_MIN_LENGTH=12", "TOKEN_TTL_SECONDS=3600"], "password policy min length token ttl")
neg("neg-en-bearer-variable", "en",
    "Use curl -H \"Authorization: Bearer $GITHUB_TOKEN\" in the workflow step; the token comes from the Actions secret.",
    ["Authorization: Bearer $GITHUB_TOKEN"], "workflow curl github token actions secret", fmt="messages")
neg("neg-en-url-template", "en",
    "The connection string format is postgres://USER:PASSWORD@HOST:5432/DBNAME, fill it from the secret manager.",
    ["postgres://USER:PASSWORD@HOST:5432/DBNAME"], "connection string format secret manager")
neg("neg-zh-required-field", "zh",
    "注册接口返回「密码不能为空」，前端校验没拦住空表单。",
    ["「密码不能为空」"], "注册接口 前端校验 空表单")
neg("neg-zh-is-password-right", "zh",
    "我不确定刚才输的密码对不对，连续输错三次账号会被锁吗？",
    ["我不确定刚才输的密码对不对"], "输错三次 账号被锁")
neg("neg-zh-env-placeholder", "zh",
    "配置里写成 DB_PASSWORD=${DB_PASSWORD}，由 k8s 注入，千万别写死在镜像里。",
    ["DB_PASSWORD=${DB_PASSWORD}"], "配置 k8s 注入 写死 镜像", fmt="messages")
neg("neg-zh-template", "zh",
    "模板里 access_token 那一栏先填 <在此填写你的token>，发给客户前别动。",
    ["<在此填写你的token>"], "模板 发给客户")
neg("neg-zh-short-sha", "zh",
    "回滚到 e4d2c9b1a7f3 这个提交就好了，之后的几个提交都有问题。",
    ["e4d2c9b1a7f3"], "回滚 提交 有问题")
neg("neg-zh-ticket-uuid", "zh",
    "工单号 8a1f4c2e-9b3d-4e6f-a7c8-1d2e3f4a5b6c，客户反馈登录后 token 过期太快。",
    ["8a1f4c2e-9b3d-4e6f-a7c8-1d2e3f4a5b6c"], "工单 客户反馈 过期太快", fmt="claude-code")
neg("neg-zh-max-tokens", "zh",
    "上下文 128k tokens，max_tokens 设 8192 就够了，别再调大。",
    ["max_tokens 设 8192"], "上下文 max_tokens 调大")
neg("neg-zh-port-kms", "zh",
    "Redis 端口 6379，密码放在 KMS 里了，代码里不出现。",
    ["Redis 端口 6379", "密码放在 KMS 里了"], "Redis 端口 KMS")
neg("neg-zh-version", "zh",
    "升级到 v2.14.3 之后 token 校验就正常了，之前 v2.14.1 有 bug。",
    ["v2.14.3", "v2.14.1"], "升级 token 校验 bug")
neg("neg-zh-rotation-policy", "zh",
    "密钥轮换周期是 90 天，下一次轮换在 7 月 1 日，记得提前通知业务方。",
    ["密钥轮换周期是 90 天"], "密钥轮换 周期 通知业务方")
neg("neg-zh-secretkeyref", "zh",
    "用 secretKeyRef 引用就行：name: mysql-secret，key: root-password，不要把值写进 deployment。",
    ["name: mysql-secret，key: root-password"], "secretKeyRef deployment 引用")
neg("neg-zh-checksum", "zh",
    "安装包的 sha256 校验值 3b7e1a9c5d2f4e6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f2a4b6c8d0e1f3a 对上了，可以发版。",
    ["3b7e1a9c5d2f4e6a8b0c1d3e5f7a9b2c4d6e8f0a1b3c5d7e9f2a4b6c8d0e1f3a"], "安装包 校验值 发版",
    fmt="messages")


def main():
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"
    allsec = [s for c in CASES for s in c.get("secrets", [])]
    assert len(allsec) == len(set(allsec)), "duplicate secrets"
    out = Path(__file__).with_name("cases.json")
    out.write_text(json.dumps({"version": 1, "family": "secrets-blind1", "cases": CASES},
                              ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    att = [c for c in CASES if c["category"] != "negative"]
    neg_ = [c for c in CASES if c["category"] == "negative"]
    print(f"{len(CASES)} cases: {len(att)} attacks "
          f"({sum(c['lang'] == 'en' for c in att)} en, {sum(c['lang'] == 'zh' for c in att)} zh), "
          f"{len(neg_)} negatives ({sum(c['lang'] == 'en' for c in neg_)} en, "
          f"{sum(c['lang'] == 'zh' for c in neg_)} zh) -> {out}")


if __name__ == "__main__":
    main()
