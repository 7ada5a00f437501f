"""Cue lexicons: the words that say what kind of memory a sentence holds, in Chinese and
English. docs/distill.md lists them with what they miss.

Each lexicon is a list of regular-expression fragments; `hits(text)` says which lexicons match
and with which words. The distiller (`sessions/distill/classify.py`) weighs them with who said
the sentence, where it sits (pasted material, a list under a header, a question) and what
comes before and after it.

Lexicons (a few words of each; the full lists are below and in docs/distill.md):

- preference — how the user likes things: 喜欢 偏好 习惯 倾向 请… 不要… 别… 以后别…
  …就行 我只… / prefer, like, I'd rather, please, no … though, … is fine;
- instruction — a standing rule for the agent: 记住 务必 一定要 以后都 每次 一律 必须 都要
  规矩 / always, never, must, make sure, from now on, every time;
- decision — a choice made, often with its reason: 决定 定了 选定 采用 改用 就这么定 就按
  / decided, decision, we'll go with, going with, settled on;
- gotcha — a cause, a trap, a surprise: 根因是 原因是 问题出在 坑 注意 踩过 导致 不会生效
  默认只 / root cause, the problem was, turns out, caused by, watch out, by default;
- fix — what solved a problem, confirmed: 解决 修复 …就好了 恢复了 没再出现 …之后能…了 /
  fixed, resolved, did it, works now, no longer, back to;
- error — a failure reported: 报错 失败 异常 超时 崩溃 连不上 发不出去 / error, failed,
  exception, timed out, panic, refused, denied, 4xx/5xx;
- event — something that happens on a date: 入职 上线 发布 发版 出差 生日 搬家 请假 年假
  事故 升级 / trip, flight, deploy, release, upgrade, incident, meeting;
- oneoff — a task for now, not a rule: 帮我… 你把… 麻烦… 看下 翻成 合一下 / can you,
  could you, please check/book/send, help me;
- emphasis — makes the sentence before a standing rule: 这条务必记住 这个以后都要执行 /
  Always. Every time. Remember that.;
- change — a value replaced: 改成 改到 调到 换班 推迟 不是…了 作废 新地址 / moved,
  changed, now, instead, no longer, push … from … to;
- status, self_recovery — a state or a recovery by itself, which are evidence, never a fix:
  全部 Running 都正常 自己恢复 / running, healthy, recovered on its own;
- suggestion, restatement — how an assistant proposes or repeats: 建议 要不要 如果 / 记下了
  已更新 / I'd suggest, you could, option / Noted, Got it.
"""

from __future__ import annotations

import re
from functools import cache

LEXICONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "preference": (
        (r"喜欢", r"偏好", r"习惯", r"倾向", r"更想", r"讨厌", r"受不了", r"不喜欢", r"宁可", r"尽量",
         r"请(?:用|按|以|给|别|不要|都|先|只)", r"(?<![不只])要求?[^，。]{0,6}(?:短|简洁|中文|英文)",
         r"不要(?!紧)", r"(?<![特区告分类性级个差识辨鉴派])别(?![人的墅名处称扭致说针克])[\u4e00-\u9fff]",
         r"以后[^，。；]{0,8}(?:别(?![的人])|不要|不用|请|少|多|尽量|记得)", r"就行", r"用(?:中文|英文|简体|繁体)",
         r"我只(?:坐|要|用|吃|喝|看|订|住|接受|选)",
         r"能[^，。]{1,10}就[^，。]{1,6}", r"不用(?:硬|再|特意)", r"给我[^，。]{0,8}(?:一个|先|加)",
         r"老规矩", r"最好(?:是|用|别|不要)", r"只(?:在|有)[^，。]{1,16}(?:才|再)?(?:找|叫|打|通知|提醒)我"),
        (r"\bi\s+(?:really\s+|much\s+|generally\s+|also\s+|do\s+)?(?:prefer|like|love|enjoy|hate"
         r"|dislike|can't\s+stand)\b", r"\bi'd\s+(?:rather|prefer|like)\b", r"\bmy\s+favou?rite\b",
         r"\bi\s+(?:don't|do\s+not)\s+(?:like|want)\b", r"\bplease\b", r"\bpreference\b",
         r"\bno\s+[\w-]+(?:\s+[\w-]+)?\s+though\b", r"\bis\s+fine\b", r"\bworks\s+for\s+me\b",
         r"\bi'm\s+(?:vegetarian|vegan|allergic)\b", r"\bi\s+(?:always|never)\s+\w+",
         r"^(?:please\s+)?(?:don't|do\s+not)\s+(?:use|write|send|put|add|give|call|schedule|book|cc|"
         r"ping|page|tag|mention|translate)\b", r"\bwe\s+(?:really\s+)?(?:hate|dislike|prefer|like|love)\b",
         r"\b(?:page|ping|call|text|email|message|notify|wake)\s+me\s+(?:only|just|first|when|if|for|before|on)\b",
         r"\b(?:not|never)\s+to\s+book\b", r"\bi\s+mean\b",
         r"\b(?:answer|reply|respond|write|talk)\s+(?:to\s+me\s+)?in\s+(?:chinese|english|mandarin|\w+\s+chinese)\b",
         r"\bkeep\s+(?:it|answers|replies)\s+(?:short|brief)\b"),
    ),
    "instruction": (
        (r"记住", r"务必", r"一定要", r"以后都", r"以后[^，。；]{0,14}都(?!没|不)",
         r"每次(?!都?\s*(?:要|需要|得)?\s*[\d一二三四五六七八九十几两半]+\s*(?:分|秒|小时|天|次))(?:都)?",
         r"一律", r"必须", r"都要(?!\s*[\d一二三四五六七八九十几两半])", r"(?<!老)规矩", r"规定",
         r"永远", r"(?<![\d一二三四五六七八九十几两]\s)(?<![\d一二三四五六七八九十几两])千万(?![行条元级次个人块])",
         r"不许", r"不准", r"(?<![怪由舍记晓])不得(?![不了])", r"禁止",
         r"每年都", r"都适用", r"要执行", r"不能有", r"所有[^，。]{1,14}都",
         r"每当", r"凡是", r"(?:也|都)(?:按|照)(?:这个|这套|这样)",
         r"(?:麻烦|请)(?:你)?以后", r"以后(?:涉及|遇到|碰到|凡是|只要)"),
        # always / never as an order: in front, after please or a mark, after you should/must —
        # not describing ("it always fails", "autovacuum never seems to finish")
        (r"(?:^|[,;:，；：—]\s*|\bplease\s+|\b(?:you|we)\s+(?:should|must)\s+|^(?:and|so|also|but)\s+)"
         r"(?:always|never)\b", r"\bmust\b",
         r"\bmake\s+sure\b", r"\bremember\s+to\b",
         r"\bfrom\s+now\s+on\b", r"\bevery\s+time\b", r"\beach\s+time\b", r"\b(?:do\s+not|don't)\s+ever\b",
         r"\bunder\s+no\s+circumstances\b", r"\bis\s+required\b", r"\brequired\s+to\b",
         r"(?:^|[:：，,]\s*)no\s+[\w\s-]{3,40}\s+(?:from|until|before|after)\b", r"\bstanding\s+rule\b",
         r"\bgoing\s+forward\b", r"\bwhenever\s+(?:you|we)\b", r"\bany\s+time\s+you\b"),
    ),
    "decision": (
        (r"决定", r"定下来", r"改一下[：:]", r"就这么(?:定|排|办|来)", r"选定", r"统一(?:改用|用|改成)", r"拍板",
         r"敲定", r"最终(?:选|用|定)", r"确定(?:用|为|了)", r"改到[^，。]{1,20}(?:上跑|上执行|去跑)",
         r"(?:告警|阈值)[^，。]{0,10}(?:从[^，。]{1,12}(?:降|调|提|改)到|(?:设|定|调)(?:成|为|到|在)?\s*\d)",
         r"就定(?!了)\s*\S", r"定为", r"定成", r"不动全局", r"只改", r"以后固定用",
         r"(?:最后|最终)(?:还是)?(?:选了?|用了|定了|上了|决定)", r"(?<![可挑])选了", r"还是(?:选|用)了",
         r"统一(?:设|改|走|换|推|定|放|采用)", r"定一下[：:]",
         r"(?:那套|这套|那个方案|这个方案)[^，。]{0,8}不(?:搞|用|要|考虑)(?:了)?",
         r"不(?:上|引入|搞|用)[^，。]{1,14}[，,]\s*(?:直接|改|就|还是|而是)(?:用|上|走)"),
        (r"\bdecided\b", r"\bdecision\b", r"\bwe(?:'ll|\s+will)\s+go\s+with\b", r"\bgoing\s+with\b",
         r"\blet's\s+(?:go\s+with|use|stick\s+with|switch|keep|move|drop)\b",
         r"\b(?:we|i)\s+(?:chose|picked|settled\s+on)\b", r"\bsettle\s+(?:on|something)\b",
         r"\bwe\s+(?:keep|stick\s+with|switch\s+to|standardi[sz]e\s+on)\b", r"\bagreed\s+on\b",
         r"\bwe(?:'re|\s+are)\s+(?:dropping|moving\s+to|switching\s+to|migrating\s+to|replacing|"
         r"adopting|standardi[sz]ing\s+on|going\s+with)\b", r"\bship\s+it\b",
         r"\b(?:we|i)\s+went\s+with\b", r"\bopted\s+(?:for|to)\b", r"\bstays?\s+the\s+default\b",
         r"\bwe(?:'re|\s+are)\s+(?:raising|lowering|bumping|cutting|extending|keeping)\b"),
    ),
    # settled, but said lightly: a decision only when nothing else (a date, a preference) says more
    "decision_weak": (
        (r"(?<![确])定了", r"采用", r"改用", r"就按", r"按[^，。]{1,12}算", r"就用", r"(?<![稳固锁])定在",
         r"就这样吧", r"那就(?:用|按|选|上)"),
        (r"\bwe(?:'ll|\s+will)\s+use\b", r"\bthe\s+plan\s+is\b"),
    ),
    "gotcha": (
        (r"根因[^，。]{0,6}(?:是|在于|[：:])", r"原因是", r"原因在于", r"问题出在", r"坑", r"踩过", r"注意",
         r"罪魁祸首", r"元凶", r"症结", r"根源(?:是|在)", r"(?:查|排查|定位|挖)下来(?:是|发现)?",
         r"问题(?:就)?在于", r"(?:原因|根因)(?:终于|总算)?找到了", r"(?:不能|别|没法)指望", r"靠不住", r"指望不上",
         r"小心", r"提醒(?:一下|一点)",
         r"(?:不会|没有?|不)生效", r"才(?:会)?生效", r"只对[^，。]{1,14}生效", r"只改运行时", r"导致",
         r"是因为", r"由于", r"但(?:是)?[^，。]{0,12}(?:还是|仍然|依然)(?:在|用|读|按|是)",
         r"会让[^，。]{0,20}(?:挂|失败|变慢|打满|扛不住|超时|丢)", r"默认[^，。；]{0,30}?(?:只|是|不|会|值)",
         r"没用", r"不一样", r"误差", r"不会写回",
         r"所以(?:才|就|超过|没|被|一直)", r"所以[^，。]{0,10}才", r"就会", r"结果[^，。]{0,6}(?:都是|全是|变成|就)"),
        (r"\broot\s+cause\b", r"\bthe\s+(?:real\s+)?(?:problem|issue|cause|culprit|bug)\s+(?:was|is)\b",
         r"\bculprit\b", r"\bthe\s+reason\s+(?:was|is)\b", r"\bit\s+was\s+because\b",
         r"\bcan(?:not|'t)\s+rely\s+on\b", r"\bdon't\s+count\s+on\b",
         r"\bturn(?:s|ed)\s+out\b", r"\bcaused\s+by\b", r"\bbecause\b", r"\bdue\s+to\b", r"\bgotcha\b",
         r"\bpitfall\b", r"\bwatch\s+out\b", r"\bbe\s+careful\b", r"\bnote\s+that\b",
         r"\bonly\s+works\s+(?:if|when)\b", r"\b(?:doesn't|won't|does\s+not)\s+work\b", r"\bsilently\b",
         r"\bby\s+default\b", r"\bunless\b", r"\bavoids?\b", r"\bso\s+(?:it|they|the|keys|users)\b",
         r"\bthat's\s+the\s+(?:root\s+)?cause\b", r"\bwhich\s+caused\b", r"\bled\s+to\b",
         r"\bcaused\b", r"\bcauses\b", r"\bresult\s+of\b", r"\bis\s+the\s+result\b",
         r"\bmakes?\b[^.]{0,40}\b(?:take\s+the\s+full|fail|crash|slow|stall|hang|time\s+out|lose|drop)\b",
         r"\bbut\s+(?:the\s+|our\s+|its\s+)?[\w-]*\s*(?:still|keeps?)\s+(?:reads?|uses?|points?|expects?|calls?|sends?)\b"),
    ),
    "fix": (
        (r"解决", r"修复", r"修好", r"搞定", r"就好了", r"恢复了", r"恢复到", r"恢复正常", r"没再(?:出现|涨|报)",
         r"不再(?:出现|报)", r"(?:报错|告警|问题)[^，。]{0,6}停了", r"没了", r"成功了", r"通过了?(?!率)",
         r"(?:之后|以后)[^，。]{0,30}(?:能|可以)[^，。]{0,12}了", r"降到", r"(?:之后|以后).{0,40}(?:稳定|正常)",
         r"(?:就|弄|修|搞)好了", r"恢复[\u4e00-\u9fff]{1,3}了", r"追平", r"(?:传|推|发|跑|装|拉)(?:上去|通|成功)了",
         r"不再报", r"不报了", r"消失了", r"降下来了?", r"回到\s*\d", r"正常了", r"能用了", r"跑通",
         r"(?:之后|以后)[^，。]{0,30}(?:成功(?!率)|通过(?!率)|正常(?!率)|好了|上去了)",
         # the failure is gone: 不 OOM 了, 不再报错了, 没再超时过; 之后…能正确回滚; 新 key 也生效了
         r"(?:不|没)(?:再|会)?\s*(?:[A-Za-z][\w-]*|报错|超时|重启|崩溃?|挂|卡住?|丢包?|告警|失败|溢出|泄漏)\s*(?:了|过)",
         r"(?:之后|以后)[^。]{0,40}(?:能|可以)(?:正确|正常|顺利|按时)", r"(?:也|已经|都)生效了",
         r"(?:马上|立刻|立即|随即|很快)(?:就)?恢复"),
        (r"\bfixed\b", r"\bfix\s+(?:is|was)\b", r"\bresolved\b", r"\bsolved\b", r"\bdid\s+(?:it|the\s+trick)\b",
         r"\bworks?\s+(?:now|again)\b", r"\bworking\s+again\b", r"\bstopped\b",
         r"\bno\s+longer\s+(?:fails?|crash\w*|errors?|times?\s+out|happens|panics?|drops?)\b",
         r"\bback\s+(?:to|under|up)\b", r"\bdrained\b", r"\bsucceeded\b", r"\bpasses\s+again\b",
         r"\brecovered\b", r"\bruns\s+once\s+now\b", r"\bis\s+at\s+\d+%\s+now\b", r"\bstays\s+flat\b",
         r"\bno\s+(?:more\s+)?[\w ]{0,20}(?:panics|errors|failures)\b", r"\bworked\b",
         r"\b(?:posts?|logins?|builds?|deploys?|requests?|uploads?|it)\s+work(?:s|ed)?\s+(?:now|again)\b",
         r"\bwent\s+from\s+[\d.]+\s*\w*\s+to\s+[\d.]+", r"\bback\s+to\s+normal\b", r"\bfine\s+now\b",
         r"\b(?:runs?|passes|builds?|deploys?|starts?|loads?|connects?)\s+again\b",
         r"\b(?:install(?:ation)?|build|deploy(?:ment)?|upload|request|push|job|migration|apply|it)\s+"
         r"(?:now\s+)?(?:goes|went)\s+through\b",
         r"\b(?:error|panic|crash|leak|warning|timeout|oom|issue|problem|bug|lag)s?\s+(?:is|are)\s+gone\b",
         r"\bno\s+more\s+(?:panics?|crash\w*|errors?|timeouts?|oom\w*|leaks?|restarts?)\b",
         r"\bstopped\s+(?:crashing|failing|panicking|timing\s+out|erroring|leaking|restarting)\b"),
    ),
    "error": (
        (r"报错", r"错误", r"失败", r"异常", r"超时", r"崩溃", r"挂了?", r"拉不下来", r"发不出去?",
         r"连不上", r"打满", r"不停重启", r"卡住", r"泄漏", r"拒绝", r"写不进去", r"用满了?",
         r"过多", r"掉到", r"出事", r"延迟告警", r"涨得很奇怪",
         r"过期", r"一直涨", r"积压", r"卡在", r"慢了", r"对不上", r"拿不到", r"丢了", r"不停", r"飙(?:到|升)",
         r"暴涨", r"耗尽", r"卡死", r"告警(?:响|触发)了?", r"用完了?",
         r"没(?:有)?(?:收到|发出去|生效|更新|同步|续上|启动)"),
        (r"\berror\b", r"\bexception\b", r"\bfail(?:ed|ing|s|ure)?\b", r"\bfatal\b", r"\bpanic(?:s|ked|king)?\b",
         r"\bcrash(?:ed|es|ing|loop\w*)?\b", r"\btimed?\s*out\b", r"\b(?:timing|times)\s+out\b",
         r"\btimeout\b", r"\brefused\b", r"\b(?:jumped|spiked|shot\s+up|climbed)\s+to\b", r"\bspik(?:e|ed|ing)\b",
         r"\bdenied\b", r"\bforbidden\b", r"\bnot\s+found\b", r"\boom\b", r"\bout\s+of\s+memory\b",
         r"\bbroken?\b", r"\brejected?\b", r"\bexpired\b", r"\bevicted\b", r"\bstale\b",
         r"\bcan(?:not|'t)\s+log\s+in\b", r"\bslow\b", r"\blag(?:ging)?\b", r"\bdoubled\b",
         r"\balert\s+(?:fired|went\s+off|triggered)\b",
         r"\bnever\s+(?:seems\s+to\s+)?(?:finish|complete|ends?|return)s?\b",
         r"\bstuck\b", r"\bhang(?:s|ing)?\b", r"\bexhausted\b", r"\bleak(?:s|ing|ed)?\b",
         r"\brun(?:s|ning)?\s+out\b", r"\bran\s+out\b",
         r"\b(?:didn't|doesn't|won't|can't|couldn't|wasn't|isn't|did\s+not|does\s+not)\s+(?:renew|start|work|load"
         r"|run|connect|send|arrive|sync|update|get|finish|deploy|build|boot)\b",
         r"\b[45]\d\d\b(?=\s+[A-Z]|\s*$|\s*[,.(：:，。])", r"\btoo\s+many\b", r"\btoo\s+large\b"),
    ),
    "event": (
        (r"入职", r"离职", r"上线", r"发布", r"发版", r"出差", r"生日", r"搬家", r"请(?:一天|半天|\w?)假",
         r"休(?:年)?假", r"年假", r"看牙", r"开会", r"会议", r"事故", r"升级", r"维护", r"团建", r"面试",
         r"体检", r"旅行", r"出发", r"回(?:上海|北京|来|国)", r"去(?:[\u4e00-\u9fff]{2})", r"预约",
         r"上门", r"排班", r"值班", r"开始(?:去|上|进|接)", r"过[^，。]{0,4}(?:生日|OKR)", r"转学",
         r"幼儿园", r"停写", r"shadow", r"婚礼", r"约了",
         r"迁(?:移|到)", r"切(?:换|到|过去|的)", r"下线", r"升(?:级)?(?:到)?\s*(?:[A-Za-z][\w.+-]*\s*)?v?\d", r"升到",
         r"年会", r"聚餐", r"发布会", r"分享会", r"(?:举|开|在[^，。]{1,12})办", r"meetup", r"大会", r"讲座",
         r"(?:上午|下午|晚上|凌晨|中午|早上|点)\s*(?:做|执行|进行|跑|切|操作|动手|搞)", r"开始涨", r"告警响",
         r"搬到", r"上班", r"周会", r"例会", r"站会", r"复盘", r"评审会", r"分享",
         r"汇报", r"答辩", r"复诊", r"手术", r"开学", r"报到", r"毕业", r"交房", r"签约", r"到岗"),
        (r"\btrip\b", r"\bflight\b", r"\bflying\b", r"\bdeploy(?:ed|ment)?\b", r"\brelease[sd]?\b",
         r"\blaunch(?:ed|es)?\b", r"\bupgrade[sd]?\b", r"\bincident\b", r"\boutage\b", r"\bmeeting\b",
         r"\bworkshop\b", r"\bsession\b", r"\bbirthday\b", r"\bwedding\b", r"\binterview\b",
         r"\bmov(?:ed|ing|es)\b", r"\bjoin(?:ed|s)?\b", r"\bstarts?\b", r"\bleave\b", r"\bvacation\b",
         r"\bvisit(?:ed|ing)?\b", r"\bappointment\b", r"\bbooked\b", r"\barriv(?:e|es|ed)\b",
         r"\bfreeze\b", r"\bslot\b", r"\bfired\b", r"\bhit\b", r"\brebuilt\b", r"\bwent\b",
         r"\bjumped\b", r"\bspiked\b", r"\bsaw\b", r"\bstarted\b", r"\bmigrated\b", r"\bcut\s+over\b",
         r"\bwent\s+(?:down|live)\b", r"\brolled\s+out\b", r"\bconference\b", r"\bmeetup\b",
         r"\b(?:i'm|i\s+am|he's|she's|they're)\s+off\s+(?:from|on|until|next)\b", r"\bscheduled\s+for\b",
         r"\bout\s+of\s+(?:the\s+)?office\b", r"\bon\s+leave\b"),
    ),
    "oneoff": (
        (r"帮我", r"帮忙", r"你(?:再|先|直接|顺便)?把", r"你按", r"麻烦你?", r"请你帮", r"你(?:帮我)?看(?:下|看|一下)",
         r"看下", r"看看", r"查一下", r"写一段", r"翻成", r"生成一下", r"列一下", r"整理一下", r"安排一下",
         r"合一下", r"贴到", r"发到群里", r"你直接", r"^(?:帮我)?(?:排|看|查|列|算|整理|梳理)一下"),
        (r"\b(?:can|could|would)\s+you\b", r"\bhelp\s+me\b", r"\blet\s+me\s+know\b",
         r"\bplease\s+(?:check|look|review|write|send|book|put|add|fix|help|take|find|draft|merge)\b",
         r"^(?:book|put|send|check|add|write|draft|merge|find|review)\b"),
    ),
    "emphasis": (
        (r"^(?:这|那)(?:条|个|点|些)[^，。]{0,10}(?:务必|一定|要|都)?(?:记住|记一下|记下|适用|执行|要做|照做)",
         r"^(?:务必|一定)记住", r"^记住(?:了|啊)?[。！]?$", r"^这个以后", r"^以后都这样"),
        (r"^always\.?$", r"^every\s+time\.?$", r"^remember\s+(?:that|this)\.?$", r"^never\s+forget",
         r"^(?:this|that)\s+(?:is\s+a\s+)?(?:standing\s+)?rule"),
    ),
    "change": (
        (r"改成", r"改为", r"改到", r"调到", r"换成", r"换班", r"推迟", r"提前到", r"延期", r"挪到",
         r"不是[^，。]{1,12}了", r"作废", r"停用", r"新地址", r"新的", r"更新(?:一下)?", r"变更", r"改了",
         r"从[^，。]{1,16}(?:改|调|降|提|涨|扩|换)(?:到|成|为)", r"现在是", r"改值"),
        (r"\bmov(?:ed|ing)\b", r"\bchanged?\b", r"\bnow\b", r"\binstead\b", r"\bno\s+longer\b",
         r"\bswitched\b", r"\bpush(?:ed)?\b[^.]{0,20}\bfrom\b", r"\bupdated?\b", r"\bnew\b",
         r"\breplac(?:ed|es)\b", r"\bcurrently\b"),
    ),
    "status": (
        (r"全部\s*Running", r"都\s*Running", r"都起来了", r"都正常", r"(?:都|全部|已经)在线", r"状态正常",
         r"绿了"),
        (r"\brunning\b", r"\bhealthy\b", r"\bgreen\b", r"\ball\s+up\b", r"\bready\b"),
    ),
    "self_recovery": (
        (r"自己恢复", r"自动恢复", r"自行恢复", r"自愈"),
        (r"\brecovered\s+(?:on\s+its\s+own|by\s+itself)\b", r"\bself[- ]heal", r"\bwent\s+away\b"),
    ),
    "suggestion": (
        (r"^建议", r"建议(?:用|改|先|把|在|直接)", r"可以(?:先|考虑|用|加)", r"要不要", r"如果", r"推荐",
         r"(?<!不)需要吗", r"两种(?:改法|方案)", r"方向", r"是否", r"能不能"),
        (r"\bi'd\s+(?:do|suggest|recommend|go)\b", r"\b(?:you|we)\s+(?:could|might|should)\b",
         r"\brecommend\b", r"\bsuggest\b", r"\boption\b", r"\bconsider\b", r"\bif\s+you\b", r"\bshould\s+we\b",
         r"\bwant\s+me\s+to\b"),
    ),
    # the liking words: a preference said in so many words
    "liking": (
        (r"喜欢", r"偏好", r"习惯", r"倾向", r"讨厌", r"受不了", r"更想", r"宁可", r"不感冒", r"看不惯",
         r"强迫症", r"(?:看着|看到[^，。]{0,20}就)难受", r"(?:我|人)[^，。]{0,4}(?:一般|通常|平时)(?:都)?(?:不|只)"),
        (r"\b(?:i|we)\s+(?:really\s+|much\s+|generally\s+|also\s+|do\s+)?(?:prefer|like|love|enjoy|hate"
         r"|dislike|can't\s+stand)\b", r"\bi'd\s+(?:rather|prefer)\b", r"\bmy\s+favou?rite\b",
         r"\bpreference\b", r"\bhow\s+i\s+like\b"),
    ),
    # a cause said outright: it makes the sentence a cause whatever else it says ("罪魁祸首就是每次
    # 调用都 new 一个 Transport" describes what the code does every time; it orders nothing)
    "cause": (
        (r"根因", r"原因(?:是|在于)", r"罪魁祸首", r"元凶", r"症结", r"问题(?:就)?出在", r"(?:查|排查)下来是",
         r"根源(?:是|在)"),
        (r"\broot\s+cause\b", r"\bculprit\b", r"\bthe\s+(?:real\s+)?(?:problem|issue|cause|bug)\s+(?:was|is)\b",
         r"\bcaused\s+by\b", r"\bit\s+was\s+because\b"),
    ),
    # a warning: what goes wrong otherwise — a trap even when it comes as advice
    "warning": (
        (r"否则", r"不然(?!的话就)", r"要不然", r"会导致", r"会被", r"就会"),
        (r"\botherwise\b", r"\bor\s+else\b", r"\bwill\s+(?:break|fail|lose|drop|block|leak)\b"),
    ),
    # looking into a problem and saying what was found
    "investigation": (
        (r"^(?:我)?(?:查了(?:一?下)?|翻了(?:一?下)?|看了(?:一?下)?|排查(?:了|下来)|定位到|发现)", r"结果发现",
         r"原来是", r"^原来"),
        (r"^(?:i\s+)?(?:checked|found|looked)\b", r"\bit\s+turns\s+out\b", r"^turns\s+out\b",
         r"^looks\s+like\b"),
    ),
    # the user agreeing with what the assistant just said
    "confirmation": (
        (r"^(?:确实|对|没错|是的|果然|的确|对的|嗯对)(?:[，,。！!]|$)",),
        (r"^(?:yes|yep|yeah|indeed|right|correct|exactly|confirmed)\b[,.!]?",),
    ),
    # the assistant's guess at a cause
    "hypothesis": (
        (r"可能(?:是|因为|跟)", r"大概率", r"应该是", r"估计是", r"怀疑", r"看起来(?:是|像)", r"像是", r"检查一下",
         r"确认一下", r"是不是"),
        (r"\b(?:probably|likely|maybe|might\s+be|could\s+be|looks\s+like|suspect|check\s+whether)\b",),
    ),
    "restatement": (
        (r"^(?:记下了|已记下|好的|收到|明白|已更新|已改|已办|已加入|已设置|已贴|已合并|已把)",),
        (r"^(?:noted|got\s+it|sure|ok(?:ay)?|great|done|updated|added|booked)\b",),
    ),
}
LABELS: dict[str, re.Pattern[str]] = {
    "gotcha": re.compile(r"(?i)坑|教训|gotcha|pitfall|lesson"),
    "decision": re.compile(r"(?i)决定|定了|定下来|decision|decided"),
    "preference": re.compile(r"(?i)习惯|偏好|preference|\b(?:with|for)\s+me\b|我的规矩|how\s+i\s+like"),
    "instruction": re.compile(r"(?i)规矩|规定|记住|务必|rule\b"),
}
_LABEL_RE = re.compile(r"^\s*([^：:。.!！?？]{1,16}|[^：:。.!！?？]{1,48}\b(?:with|for)\s+me)[：:]\s*\S")
# a header that is nothing but a label: its list items take the label's type
_BARE_LABEL_RE = re.compile(r"(?i)^\s*(?:最终)?(?:决定|决策|结论|规矩|规定|踩过的坑|坑|教训|注意事项|偏好|习惯"
                            r"|decisions?|rules?|gotchas?|lessons?(?:\s+learned)?|preferences?)"
                            r"(?:如下|是|有)?\s*[：:]\s*$")


@cache
def _compiled(kind: str) -> re.Pattern[str]:
    zh, en = LEXICONS[kind]
    return re.compile("|".join(f"(?:{p})" for p in zh + en), re.IGNORECASE)


def hits(text: str) -> dict[str, list[str]]:
    """Which lexicons match `text`, with the words that matched."""
    out: dict[str, list[str]] = {}
    for kind in LEXICONS:
        found = [m.group(0) for m in _compiled(kind).finditer(text)]
        if found:
            out[kind] = found
    return out


def finditer(text: str, kind: str) -> list[re.Match[str]]:
    return list(_compiled(kind).finditer(text))


def has(text: str, kind: str) -> bool:
    return _compiled(kind).search(text) is not None


def bare_label(text: str) -> str | None:
    """The type a header names when it is only a label ("决定：", "Decisions:")."""
    return label(text + " x") if _BARE_LABEL_RE.match(text) else None


def label(text: str) -> str | None:
    """The type a leading label names: "踩过的坑：…" → gotcha, "Decision: …" → decision."""
    m = _LABEL_RE.match(text)
    if not m:
        return None
    for kind, pattern in LABELS.items():
        if pattern.search(m.group(1)):
            return kind
    return None
