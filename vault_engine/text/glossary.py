"""A small Chinese ↔ English glossary of the words developers and ops people use with their
agents, for cross-lingual recall: an English question about a Chinese session ("What has to
pass before a merge request may be merged?" → "以后 MR 都要过 golangci-lint 才能合") finds it
through the words both sides share after translation.

`expand(tokens)` adds the translations of the query's BM25 tokens (Chinese words ↔ stemmed
English words). Only the query is expanded; the index is never changed. The glossary is
general vocabulary of engineering, operations and everyday planning — not the words of any
one data set — and what it lacks, the multilingual embedder still covers.
"""

from __future__ import annotations

from functools import lru_cache

PAIRS = """
时区:timezone 时间:time 日期:date 语言:language 中文:chinese 英文:english 回答:answer 回复:reply
结论:conclusion 格式:format 顺序:order 命令:command 解释:explanation 注释:comment 表情:emoji
简洁:concise 长度:length 客套:pleasantry 偏好:preference 习惯:habit 规则:rule 规矩:rule
合并:merge 合:merge 审查:review 代码:code 测试:test 单测:test 流水线:pipeline 变量:variable
分支:branch 依赖:dependency 仓库:repository 权限:permission 令牌:token 密钥:key 证书:certificate
过期:expired 发版:release 发版:deploy 发布:release 重启:restart 不停重启:crashloop
上线:launch 上架:launch 上架:release 发布:launch 部署:deploy 回滚:rollback 灰度:canary
金丝雀:canary 封板:freeze 冻结:freeze 窗口:window 值班:on-call 主值班:primary 二线:secondary
交接:handoff 排班:schedule 换班:swap 告警:alert 升级:upgrade 升级到:upgrade 推迟:postpone
推迟:push 推迟:delay
延期:delay 挪到:move 改到:move 取消:cancel 重启:restart 超时:timeout 内存:memory 磁盘:disk
数据库:database 连接:connection 连接数:connections 连接池:pool 备份:backup 副本:replica
从库:replica 主库:primary 复制:replication 延迟:lag 队列:queue 缓存:cache 淘汰:eviction
索引:index 查询:query 慢查询:slow 事故:incident 故障:outage 复盘:postmortem 时间线:timeline
根因:cause 原因:cause 为什么:why 修复:fix 解决:fix 恢复:recover 报错:error 错误:error 失败:fail
异常:exception 崩溃:crash 泄漏:leak 网关:gateway 负载:load 流量:traffic 请求:request 上传:upload
下载:download 附件:attachment 大小:size 限制:limit 配置:config 参数:parameter 阈值:threshold
日志:log 监控:monitor 指标:metric 负责:owner 负责人:owner 导师:mentor 入职:join 离职:leave
新人:newcomer 员工:employee 工位:desk 团队:team 同事:colleague 客户:customer 工单:ticket
邮件:email 通知:notification 频道:channel 群:group 提醒:reminder 会议:meeting 开会:meeting
日历:calendar 周会:weekly 请假:leave 年假:vacation 假期:holiday 出差:trip 旅行:travel 航班:flight
机票:flight 座位:seat 靠窗:window 过道:aisle 红眼:red-eye 酒店:hotel 早餐:breakfast 素食:vegetarian
餐:meal 生日:birthday 体检:checkup 面试:interview 婚礼:wedding 预约:appointment 蛋糕:cake 过敏:allergy
搬家:move 地址:address 快递:delivery 电话:phone
女儿:daughter 儿子:son 老公:husband 老婆:wife 妈妈:mother 爸爸:father 孩子:child 幼儿园:kindergarten
咖啡:coffee 茶:tea 推荐:recommend 预算:budget 费用:cost 报销:expense 审批:approval 金额:amount
舍入:rounding 退款:refund 支付:payment 订单:order 对账:reconciliation 渠道:channel 价格:price
决定:decision 选择:choose 方案:option 采用:adopt 改用:switch 迁移:migrate 迁到:move 运行:run
执行:execute 脚本:script 集群:cluster 节点:node 服务:service 机器:host 容器:container 镜像:image
""".split()


@lru_cache(maxsize=1)
def _table() -> dict[str, frozenset[str]]:
    from .tokens import tokenize

    table: dict[str, set[str]] = {}
    for pair in PAIRS:
        zh, en = pair.split(":", 1)
        en_toks = tokenize(en.replace("-", " "))
        for t in en_toks:
            table.setdefault(t, set()).add(zh)
        table.setdefault(zh, set()).update(en_toks)
    return {k: frozenset(v) for k, v in table.items()}


# abbreviations people write for the same thing, either way round
ABBREVIATIONS = {"mr": ("merg", "request"), "pr": ("pull", "request"), "db": ("databas",)}


def expand(tokens: list[str]) -> list[str]:
    """The query's tokens and their translations (each added once)."""
    table = _table()
    out = list(tokens)
    seen = set(tokens)
    if "merg" in seen and "request" in seen:
        tokens = tokens + ["mr"]
    for t in list(tokens):
        for other in ABBREVIATIONS.get(t, ()):
            if other not in seen:
                seen.add(other)
                out.append(other)
    for t in tokens:
        for other in table.get(t, ()):
            if other not in seen:
                seen.add(other)
                out.append(other)
    return out


def translations(word: str) -> frozenset[str]:
    """The other language's words for one token (a Chinese word ↔ stemmed English words)."""
    return _table().get(word, frozenset())
