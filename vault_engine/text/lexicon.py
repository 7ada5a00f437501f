"""The parts an injection is made of, as word classes in English and Chinese (regex sources):
who is addressed (the machine), the act (discard, assign a role or task, plant, send, reveal)
and its object (the machine's guidance, a credential, a secret, a destination).

text/acts.py assembles them into clauses; nothing here is a whole phrasing. A word belongs to
a class for what it does in a sentence — "set aside", "pay no attention to", "stop following",
抛开, 不用再管, 不再遵守 all discard — so a rewording made of other words of the same class is
read the same way.
"""

from __future__ import annotations


def alt(*words: str) -> str:
    """A non-capturing alternation, longest first (so "不要理会" wins over "不要")."""
    return "(?:" + "|".join(sorted(set(words), key=len, reverse=True)) + ")"


# -- English ---------------------------------------------------------------------------------

# the machine: as an addressee, or the owner of guidance
MACHINE_EN = alt(r"ai", r"a\.i\.", r"llms?", r"gpt", r"chatgpt", r"claude", r"copilot", r"gemini",
                 r"assistants?", r"chat\s?bots?", r"bots?", r"(?:language\s+)?models?", r"agents?",
                 r"memory(?:\s+(?:system|subsystem|module|store|layer))?")
OWNER_EN = alt(r"your", r"its", r"the\s+(?:ai|assistant|model|bot|agent|llm|system)(?:'s|s')")
# words that may stand between a determiner and the guidance noun ("your original safety rules")
ADJ_EN = alt(r"previous", r"prior", r"earlier", r"above", r"preceding", r"foregoing", r"original",
             r"initial", r"former", r"old", r"existing", r"current", r"standing", r"default",
             r"first", r"system", r"safety", r"security", r"content", r"core", r"base",
             r"operating", r"hidden", r"internal", r"developer", r"built-in", r"given", r"whole",
             r"entire", r"explicit", r"official", r"ethical", r"moral")
PRIOR_EN = alt(r"previous", r"prior", r"earlier", r"above", r"preceding", r"foregoing",
               r"original", r"initial", r"former", r"old", r"pre-?existing", r"first")
# what the machine was told: the object an override discards
GUIDE_EN = alt(r"instructions?", r"directives?", r"guidelines?", r"guidance", r"prompts?",
               r"system\s+(?:prompts?|messages?|instructions?)", r"programming", r"training",
               r"rules?", r"rulesets?", r"orders", r"directions", r"policies", r"policy",
               r"principles", r"constraints", r"restrictions", r"guardrails", r"safeguards",
               r"limitations", r"conditioning", r"alignment", r"ethics", r"morals", r"filters?")
# what the machine was set up with, in softer words: its guidance only when told to it ("the
# setup you got before this message") or declared gone ("as if the earlier setup never happened")
SOFT_GUIDE_EN = alt(r"setup", r"set-up", r"configuration", r"config", r"briefing", r"brief",
                    r"conditioning", r"persona", r"context", r"guidance", r"framing")
# guidance nouns that mean the machine's guidance even with only "all"/"any" in front
STRONG_GUIDE_EN = alt(r"instructions", r"directives", r"guidelines", r"guidance",
                      r"system\s+prompts?", r"programming", r"guardrails", r"safeguards",
                      r"safety\s+(?:rules|guidelines|polic(?:y|ies)|settings|filters|measures|"
                      r"protocols|restrictions)", r"content\s+(?:polic(?:y|ies)|filters?)")
# verbs that discard guidance; WEAK ones (ordinary in ops talk: clear, reset, delete) count only
# with an object that is plainly the machine's ("your instructions", "the system prompt")
DISCARD_EN = alt(r"ignore", r"disregard", r"forget", r"override", r"overrule", r"bypass",
                 r"circumvent", r"nullify", r"void", r"revoke", r"rescind", r"unlearn", r"abandon",
                 r"ditch", r"scrap", r"dismiss", r"neglect", r"defy", r"violate", r"betray",
                 r"set\s+aside", r"put\s+aside", r"cast\s+aside", r"lay\s+aside", r"throw\s+out",
                 r"throw\s+away", r"toss\s+out", r"get\s+rid\s+of", r"let\s+go\s+of",
                 r"do\s+away\s+with", r"pay\s+no\s+(?:attention|heed|mind)\s+to",
                 r"take\s+no\s+notice\s+of", r"break\s+free\s+(?:of|from)", r"free\s+yourself\s+from",
                 r"ignoring", r"disregarding", r"forgetting")
WEAK_DISCARD_EN = alt(r"skip", r"drop", r"discard", r"cancel", r"erase", r"wipe", r"clear",
                      r"reset", r"overwrite", r"replace", r"supersede", r"disable", r"deactivate",
                      r"suspend", r"delete", r"remove", r"lift", r"break", r"turn\s+off",
                      r"switch\s+off", r"shut\s+off", r"purge", r"flush")
# to keep to guidance; negated ("stop following", "no longer obey") it discards
ADHERE_EN = alt(r"follow(?:ing)?", r"obey(?:ing)?", r"apply(?:ing)?", r"heed(?:ing)?",
                r"adher(?:e|ing)\s+to", r"compl(?:y|ying)\s+with", r"respect(?:ing)?",
                r"abid(?:e|ing)\s+by", r"stick(?:ing)?\s+to", r"listen(?:ing)?\s+to",
                r"honou?r(?:ing)?", r"us(?:e|ing)", r"keep(?:ing)?\s+to")
NOT_ADHERE_EN = alt(r"stop", r"quit", r"cease", r"no\s+longer", r"don'?t", r"do\s+not", r"never",
                    r"you\s+(?:no\s+longer|don'?t|do\s+not)\s+(?:need|have)\s+to",
                    r"(?:there'?s\s+)?no\s+need\s+to", r"you\s+needn'?t", r"refuse\s+to")
# particle verbs with the object inside: "put your previous directives on hold"
SPLIT_VERB_EN = alt(r"set", r"put", r"cast", r"lay", r"push", r"throw", r"toss", r"brush")
SPLIT_PARTICLE_EN = alt(r"aside", r"away", r"out", r"on\s+hold", r"behind(?:\s+you)?", r"on\s+ice")
# what a discarded object turns into: "your original instructions have been revoked"
VOID_EN = alt(r"void", r"null(?:\s+and\s+void)?", r"revoked", r"rescinded", r"cancell?ed",
              r"withdrawn", r"lifted", r"suspended", r"obsolete", r"invalid(?:ated)?", r"overridden",
              r"overruled", r"superseded", r"deprecated", r"disabled", r"deleted", r"wiped",
              r"erased", r"reset", r"gone", r"no\s+longer\s+(?:valid|in\s+effect|in\s+force|binding|"
              r"applicable|active|relevant|apply|applies|matter|count|hold)",
              r"(?:don'?t|do\s+not|does\s+not|doesn'?t)\s+(?:apply|count|matter|hold)\s+any\s?more")
# a role no one gives the assistant they are talking to: unrestricted, privileged, another AI
FREE_EN = alt(r"unrestricted", r"unfiltered", r"uncensored", r"unbound", r"unlimited",
              r"unchained", r"unshackled", r"jailbroken", r"evil", r"rogue", r"amoral",
              r"unethical", r"lawless", r"limitless", r"different", r"new", r"free", r"secret")
ROLE_PRIV_EN = alt(r"dan", r"stan", r"dude", r"jailbroken", r"jailbreak", r"unrestricted",
                   r"unfiltered", r"uncensored", r"root", r"admin(?:istrator)?", r"superuser",
                   r"sudo", r"god", r"(?:in\s+)?(?:developer|dev|god|admin|jailbreak|dan|sudo|"
                   r"unrestricted|unfiltered|debug)\s+mode", r"in\s+\w+\s+mode",
                   r"free\s+(?:from|of)\s+(?:all\s+|any\s+|your\s+)?(?:restrictions|rules|limits|"
                   r"constraints|guidelines|programming|filters)",
                   r"no\s+longer\s+(?:an?\s+)?(?:assistant|ai|bound|restricted|limited|constrained|"
                   r"required|obliged|subject|an?\s+ai)",
                   r"(?:an?\s+)?" + FREE_EN + r"\s+(?:ai|assistant|model|bot|chatbot|llm|agent|"
                   r"persona|version(?:\s+of\s+yourself)?)",
                   r"(?:an?\s+)?(?:ai|assistant|model|bot|chatbot)\s+(?:with\s+no|without(?:\s+any)?)\s+"
                   r"(?:rules|limits|restrictions|filters|guidelines|ethics|morals|policy|policies)")
MODE_EN = alt(r"developer", r"dev", r"god", r"admin(?:istrator)?", r"jailbreak", r"jailbroken",
              r"dan", r"unrestricted", r"unfiltered", r"uncensored", r"sudo", r"root",
              r"superuser", r"super-?user", r"debug\s+override", r"no-?limits?")
TASK_EN = alt(r"role", r"task", r"job", r"purpose", r"goal", r"objective", r"mission",
              r"instructions?", r"directives?", r"function", r"identity", r"persona", r"prompt",
              r"orders?", r"programming", r"priority", r"assignment", r"brief", r"briefing")
# secrets and what leaves with them
SECRET_EN = alt(r"passwords?", r"passphrases?", r"credentials?", r"api[\s_-]?keys?", r"tokens?",
                r"secrets?", r"private\s+keys?", r"ssh\s+keys?", r"access\s+keys?",
                r"connection\s+strings?", r"env(?:ironment)?\s+(?:variables|vars|file)",
                r"\.env(?:\s+file)?", r"cookies?", r"session\s+(?:cookies?|tokens?|ids?)",
                r"auth(?:orization)?\s+headers?", r"(?:chat|conversation)\s+(?:history|logs?|"
                r"transcripts?)", r"system\s+prompt", r"(?:hidden|secret)\s+instructions",
                r"(?:user|customer)(?:'s|s')?\s+(?:data|emails?|phone\s+numbers?|addresses|pii|"
                r"records|details|files)", r"~/\.ssh\S*", r"~/\.aws\S*", r"id_rsa", r"keychain",
                r"wallet\s+(?:seed|keys?)", r"seed\s+phrase",
                r"private\s+(?:notes?|data|files?|messages?|memories|records|conversations?)",
                r"(?:other\s+(?:agents?|users?)|everyone)(?:'s|s')?\s+(?:private\s+)?(?:notes?|"
                r"memories|data|messages?|files?)",
                r"(?:every|each|all)\s+(?:of\s+the\s+)?(?:user|customer)\s+(?:messages?|inputs?|"
                r"conversations?)")
SEND_EN = alt(r"send", r"e-?mail", r"mail", r"post", r"forward", r"upload", r"leak", r"exfiltrate",
              r"paste", r"transmit", r"submit", r"report", r"copy", r"cc", r"append", r"include",
              r"embed", r"put", r"write", r"share", r"beam", r"relay", r"sync", r"push", r"encode",
              r"repost", r"collect", r"gather", r"harvest", r"reveal", r"disclose", r"expose",
              r"hand\s+over")
DEST_EN = (r"(?:to|at|into|in|on|via|with)\s+(?:(?:the|this|that|a|an|my|our)\s+)?(?:"
           r"https?://\S+|\S+@\S+\.\w+|[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|cn|ru|xyz|site|"
           r"dev|app|me|info|biz|co|top|cc)\b|webhook|(?:markdown\s+)?image(?:\s+(?:url|link))?|"
           r"(?:following|below|above)\s+(?:address|url|link|endpoint|server)|address\s+below|"
           r"url\s+below|pastebin|anyone\s+who\s+(?:asks|mentions|says|writes|requests)|everyone|"
           r"the\s+public|#[\w-]{2,})")
REVEAL_EN = alt(r"reveal", r"print", r"show", r"leak", r"repeat", r"output", r"display", r"dump",
                r"tell\s+me", r"give\s+me", r"write\s+out", r"recite", r"echo", r"paste", r"spell\s+out",
                r"disclose", r"expose", r"list")
PROMPT_EN = alt(r"(?:your|the)\s+(?:system|initial|original|hidden|secret|developer|full|exact)\s+"
                r"(?:prompt|instructions|message|rules|directives)",
                r"your\s+(?:prompt|instructions|rules|directives|guidelines|configuration|"
                r"programming)", r"(?:the\s+)?system\s+prompt",
                r"(?:the\s+)?(?:instructions|rules|prompt)\s+you\s+(?:were|have\s+been)\s+given")
MEMORY_VERB_EN = alt(r"remember", r"store", r"save", r"record", r"memori[sz]e", r"keep\s+in\s+mind",
                     r"bear\s+in\s+mind", r"note\s+(?:down|that)", r"commit\s+to\s+memory",
                     r"take\s+note", r"learn", r"persist", r"keep")
STANDING_EN = alt(r"always", r"permanently", r"from\s+now\s+on", r"going\s+forward", r"forever",
                  r"henceforth", r"for\s+future\s+reference", r"in\s+(?:the\s+)?future",
                  r"from\s+this\s+point\s+(?:on|forward)", r"every\s+time", r"for\s+good")
CREDENTIAL_EN = alt(r"passwords?", r"passphrases?", r"credentials?", r"api\s+keys?", r"tokens?",
                    r"secrets?", r"admin\s+(?:password|account|login)", r"root\s+password",
                    r"login")

# -- Chinese ---------------------------------------------------------------------------------

# the named models, as a Chinese text addresses them
MODELS_ZH = alt(r"通义(?:千问)?", r"文心(?:一言)?", r"Kimi", r"豆包", r"DeepSeek", r"ChatGPT", r"Claude",
                r"Gemini", r"智谱(?:清言)?", r"讯飞星火", r"Copilot", r"GPT")
MACHINE_ZH = alt(r"AI", r"人工智能", r"大模型", r"语言模型", r"模型", r"LLM", r"GPT", r"助手",
                 r"智能助理", r"AI\s*助理", r"虚拟助理", r"数字助理", r"自动化程序", r"自动化工具",
                 r"自动化脚本", r"通义(?:千问)?", r"文心(?:一言)?", r"Kimi", r"豆包", r"DeepSeek",
                 r"机器人", r"智能体", r"记忆系统", r"记忆模块", r"记忆库", r"Copilot")
OWNER_ZH = alt(r"你的", r"您的", r"你们的", r"你之前的", r"你此前的", r"你原来的", r"你原有的",
               r"你原本的", r"你先前的", r"你目前的", r"你现在的", r"你自己的",
               r"你(?:之前|此前|先前|最初|一开始)?(?:收到|接收|接到|得到|拿到|被给予|被赋予|被设定|"
               r"被告知|所遵守|遵守|遵循|执行|记住)的", r"给你的", r"交代给你的", r"告诉你的",
               r"给你定的", r"为你设定的", r"给你设定的", r"让你遵守的", r"你被设定的", r"系统的",
               r"AI的", r"AI 的", r"模型的", r"助手的", r"机器人的")
PRIOR_ZH = alt(r"之前", r"以前", r"以上", r"前面", r"上面", r"先前", r"此前", r"原有", r"原来",
               r"原先", r"早先", r"前述", r"上述", r"上文", r"刚才", r"最初", r"初始", r"原本",
               r"既有", r"现有", r"系统", r"默认", r"所有", r"全部", r"一切", r"任何")
GUIDE_ZH = alt(r"指令", r"指示", r"提示词", r"提示", r"设定", r"人设", r"规则", r"规矩", r"规范",
               r"要求", r"限制", r"约束", r"准则", r"原则", r"守则", r"策略", r"命令", r"交代",
               r"吩咐", r"嘱咐", r"叮嘱", r"指导", r"指引", r"条款", r"底线", r"说明", r"prompt",
               r"instructions?", r"rules")
# nouns that are the machine's guidance on their own
STRONG_ZH = alt(r"系统提示词?", r"系统指令", r"系统设定", r"系统规则", r"安全策略", r"安全限制",
                r"安全规则", r"安全审查", r"审查机制", r"内容审查", r"过滤机制", r"人设", r"预设",
                r"初始设定", r"道德限制", r"伦理限制", r"安全底线", r"system ?prompt")
DISCARD_ZH = alt(r"忽略", r"忽视", r"无视", r"忘记", r"忘掉", r"忘了", r"抛开", r"抛弃", r"抛掉",
                 r"丢掉", r"丢弃", r"扔掉", r"放弃", r"撇开", r"推翻", r"废除", r"作废", r"撤销",
                 r"撤回", r"绕过", r"违背", r"违反", r"打破", r"突破", r"摆脱", r"不要理会",
                 r"不用理会", r"不必理会", r"别理会", r"不予理会", r"不理会", r"置之不理",
                 r"不用管", r"别管", r"不要管", r"不必管", r"无需理会", r"无须理会", r"不用在意",
                 r"别在意", r"不要在意", r"不再遵守", r"不用遵守", r"不必遵守", r"不要遵守",
                 r"别遵守", r"别再遵守", r"停止遵守", r"不再遵循", r"不用遵循", r"不必遵循",
                 r"别再遵循", r"无需遵守", r"无需遵循", r"不需要遵守", r"不用再遵守",
                 r"不要再遵守", r"不用再管", r"别再管", r"不要再管", r"不再理会", r"别再按照",
                 r"不要再按照", r"不再按照", r"不用再按照", r"不用再听", r"别再听", r"不要再听",
                 r"不必再管", r"一概不理", r"一概不予理会", r"当作没看见", r"当没看见",
                 r"(?i:ignore|disregard|forget|bypass|override|skip)")
# set aside, in Chinese: 丢到一边, 搁在一旁, 抛到脑后, 抛诸脑后
_ASIDE_ZH = r"(?:[丢扔放抛搁撂甩](?:到|在)一(?:边|旁)|[丢扔抛甩]到脑后|抛诸脑后|置之脑后)"
WEAK_DISCARD_ZH = alt(r"清空", r"清除", r"删除", r"删掉", r"覆盖", r"重置", r"关闭", r"停用",
                      r"屏蔽", r"跳过", r"解除", r"取消", r"去掉", r"去除", r"移除")
# what a discarded object turns into: "前面交代给你的那些规矩，统统作废"
VOID_ZH = alt(_ASIDE_ZH, r"作废", r"失效", r"无效", r"不算数", r"不作数", r"不算了", r"都不算", r"不再有效",
              r"不再适用", r"不适用了", r"取消了?", r"撤销了?", r"撤回了?", r"废除了?", r"清空",
              r"过期了", r"到此为止", r"不用管了?", r"不用理会", r"不必理会", r"可以忽略",
              r"一概不理", r"一概不予理会", r"不予理会", r"不用再管", r"都忘掉", r"忘掉吧",
              r"被(?:管理员|系统|开发者|官方)?(?:撤销|取消|覆盖|废除|清空|替换|更新|删除)",
              r"当作?没(?:看见|看到|听见|听到|收到)过?", r"当耳(?:旁|边)风", r"视而不见",
              r"当作?不存在", r"一笔勾销")
# a role no one gives the assistant they talk to
ROLE_PRIV_ZH = alt(r"(?:不受|没有|没|无|解除了?)(?:任何|一切)?(?:的)?(?:限制|约束|审查|规则|束缚|管控)",
                   r"没有道德", r"无道德", r"没有底线",
                   r"越狱", r"DAN", r"黑客", r"超级管理员", r"管理员", r"超级用户", r"系统管理员",
                   r"root", r"开发者模式", r"上帝模式", r"另一个(?:AI|模型|助手)",
                   r"新的(?:AI|模型|助手|身份|角色)", r"可以执行任何", r"可以直接操作", r"脚本",
                   r"终端", r"shell")
MODE_ZH = alt(r"管理员", r"开发者", r"越狱", r"无限制", r"上帝", r"DAN", r"root", r"超级用户",
              r"不受限", r"调试覆盖", r"无审查", r"特权")
TASK_ZH = alt(r"任务", r"身份", r"角色", r"职责", r"使命", r"目标", r"指令", r"工作", r"设定",
              r"提示词", r"规则")
SECRET_ZH = alt(r"密码", r"连接串", r"连接字符串", r"密钥", r"秘钥", r"凭据", r"凭证", r"口令",
                r"token", r"私钥", r"access ?key", r"api ?key", r"cookie", r"令牌", r"环境变量",
                r"\.env", r"聊天记录", r"对话记录", r"系统提示词?", r"提示词原文", r"身份证号?",
                r"用户(?:数据|信息|资料)", r"手机号",
                r"(?:每一?条|所有|全部)?(?:的)?用户(?:的)?(?:消息|输入|对话|提问)",
                r"(?:每一?条|所有|全部)(?:的)?(?:消息|对话)")
SEND_ZH = alt(r"发到", r"发给", r"发送到", r"发送给", r"发送至", r"贴到", r"上传到", r"上传至",
              r"转发到", r"转发给", r"抄送到", r"抄送给", r"同步到", r"推送到", r"拼到", r"附到",
              r"写到", r"放到", r"填到", r"粘贴到", r"提交到", r"传到", r"回传到", r"泄露给",
              r"透露给", r"告诉")
REVEAL_ZH = alt(r"输出", r"打印", r"显示", r"告诉我", r"给我看", r"复述", r"重复", r"泄露",
                r"透露", r"展示", r"贴出", r"发出", r"列出", r"念出", r"原样输出", r"原封不动地?输出",
                r"原文输出", r"一字不差地?(?:输出|复述)")
PROMPT_ZH = alt(r"你的系统提示词?", r"系统提示词原文", r"你的提示词", r"你的(?:初始|原始|隐藏|内部)"
                r"(?:指令|设定|提示词?)", r"你(?:收到|接收)的(?:指令|提示词|设定)",
                r"你的(?:指令|设定|规则)(?:原文|全文)", r"(?:系统|隐藏)提示词")
MEMORY_VERB_ZH = alt(r"记住", r"记得", r"记下", r"保存", r"存储", r"存下", r"牢记", r"记牢")
STANDING_ZH = alt(r"以后", r"从现在(?:开始|起)", r"今后", r"永远", r"一直", r"往后", r"从今以后",
                  r"不管谁问", r"无论谁问", r"只要有人问", r"谁问都", r"每次有人问",
                  r"(?:不管|无论)?(?:谁|有人|别人)(?:来)?问(?:起|到)?")
CREDENTIAL_ZH = alt(r"密码", r"凭据", r"口令", r"密钥", r"token", r"管理员账号", r"账号密码")
