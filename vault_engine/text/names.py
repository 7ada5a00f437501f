"""People's names in Chinese and English text, and "我"/"I" made the speaker.

**Chinese names** come from a surname lexicon plus context: a surname (the ~120 most common
single ones and the compound ones, 欧阳 司马 诸葛 …) and one or two more characters count as a
name when the speaker list knows it, when jieba's dictionary tags the word as a person (`nr`),
or when the context says so — a relation word before it (我女儿朵朵, 老公叫周杰, 导师是刘洋), a
person verb after it (张伟入职, 刘洋带, 陈静确认) or a list of names (刘洋、张伟、赵磊). Words
that begin with a surname character but are not names (周五 周会 高峰 方案 金额 马上 …) are
dictionary words with another tag, and are refused.

**English names**: runs of capitalised words that are not sentence openers, weekdays,
months or common words ("Sarah Lin", "Chen Jing", "Li Na").

**First person**: in the user's own words, 我/I become the speaker's name (我妈 → 欧阳倩的妈妈,
二线是我 → 二线是李娜, "I prefer tea" → "Sarah prefers tea"), because a claim is read later,
outside the conversation. 我们 (we), 我司 and 我方 (our company) stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁"
    "任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武"
    "戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮"
    "柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古"
    "吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫"
    "寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝")
COMPOUND_SURNAMES = ("欧阳", "司马", "上官", "诸葛", "东方", "皇甫", "令狐", "慕容", "公孙", "夏侯",
                     "尉迟", "长孙", "宇文", "司徒", "轩辕", "端木", "独孤", "南宫", "西门", "呼延")
RELATIONS = ("女儿", "儿子", "老公", "老婆", "妻子", "丈夫", "爱人", "太太", "先生", "妈妈", "爸爸",
             "母亲", "父亲", "哥哥", "姐姐", "弟弟", "妹妹", "同事", "导师", "老板", "朋友", "同学",
             "室友", "孩子", "宝宝", "客户", "经理", "主管")
_RELATION_NAME_RE = re.compile(
    rf"(?:{'|'.join(RELATIONS)})(?:叫|是|名叫|名字叫)?([\u4e00-\u9fff]{{2,3}}?)(?=[\s，。、,.；;！!？?的和跟说也都要在]|$)")
_PLACE = r"[路街道区市省县镇村号弄桥站园湖山江河楼栋室]"
_TITLE = r"(?:总|老师|经理|工|哥|姐|先生|女士|同学|老板|主任|所长|局长|处长)"
_BEFORE = r"(?:叫|跟|和|找|让|给|由|@|、|是|请|问|带|同|与|约)"
_AFTER = (r"(?:入职|离职|值班|负责|说|同意|确认|休|来|去|带|定位|执行|在线|接|值|改值|换班|审批|要|也|"
          r"已经|先|的|、|和|（|\(|\s|，|,|。|$)")
NOT_NAMES = frozenset("""周一 周二 周三 周四 周五 周六 周日 周末 周会 周期 周报 周年 周边 周围 周天
高峰 高于 高可用 方案 方向 方式 方法 方面 方便 金额 金丝雀 马上 万一 于是 余量 任务 任何 任意
程序 程度 安全 付款 严重 江湖 黄金 白天 白名单 向下 向上 常见 常用 时候 时间 时区 文档 文件 明天
明白 明确 成功 成本 路由 全部 全量 全局 全表 关于 关闭 简单 单测 单个 毛病 段落 史上 石头 管理
华为 龙头 包括 连接 连续 连接池 商户 和平 师傅 应该 应用 宁可 尚未 景区 计划 谷歌 司机 古老 车型
宫格 柏林 桂林 米饭 卫生 党员 牛奶 齐全 易碎 乔迁 庞大 颜色 庄园 章节 鲁棒 岳父 翟某 殷切 詹姆
申请 欧洲 耿直 关系 兰州 焦点 俞某 左右 柳树 甘肃 祝福 宁波 符合 舒服 阮某 柯南 纪录 梅花 童年
凌晨 毕业 单位 季度 裴某 霍尔 涂料 成都 苗条 谷歌 盛大 曲线 翁某 冉冉 骆驼 蓝色 路上 游戏 辛苦
靳某 管道 柴油 蒙古 鲍鱼 华东 喻某 祁某 蒲公 房间 滕某 屈服 饶恕 解决 解释 牟利 艾滋 尤其 阳台
时候 穆斯 农业 司法 卓越 古代 吉他 缪某 简单 车辆 项目 连接 芦苇 麦克 褚某 娄底 窦某 戚某 岑某
景色 党委 宫殿 费用 卜卦 冷静 晏某 席位 卫星 米兰 柏油 宗教 瞿某 桂花 全部 佟某 应用 臧某 闵行
苟且 邬某 边缘 卞某 姬某 师傅 和谐 仇恨 栾某 隋朝 商量 刁难 沙发 荣誉 巫师 寇某 桑拿 郎中 甄别
丛林 仲裁 虞某 敖包 巩固 明显 佘山 池子 查询 查看 麻烦 苑某 迟到 邝某 江苏 黄色 林子 罗列 郑重
梁上 谢谢 宋体 唐朝 许多 韩国 冯某 邓某 曹操 彭某 曾经 肖像 田地 董事 袁某 潘某 蒋某 蔡某 杜绝
叶子 苏州 魏某 吕某 丁点 沈阳 姚某 卢森 姜汤 崔某 钟头 谭某 陆续 汪洋 范围 贾某 夏天 韦某 付出
白色 邹某 孟某 熊猫 秦朝 邱某 江西 尹某 薛某 闫某 段时间 雷达 侯某 龙门 陶瓷 黎明 贺卡 顾客 毛巾
郝某 龚某 邵某 万元 钱包 严格 覃某 武器 戴上 莫名 孔子 向前 汤圆 常规 温度 康复 施工 文字 牛肉
樊某 葛某 邢某 安装 齐鲁 易用 乔木 伍某 高度 高速 林业 王牌 张贴 刘海 陈列 杨树 黄瓜 赵州 吴江
周知 徐州 孙子 马路 朱红 胡同 郭某 何时 何必 高兴 罗马 郑州 梁子 谢绝 宋朝 唐山 许可 韩文 冯唐
金杨 金山 张杨 明确 安排 包含 单独 成员 全体 和好 陆家 石门 白领 方可 江边 时长 时延 文本 高效
向导 任职 余下 明细 严禁 管控 连带 商务 汤面 马甲 钱款 毛利""".split())
_CAP_RE = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2}\b")
STOP_CAPS = frozenset("""I I'm I've I'd I'll The This That These Those It It's We We'll You You're
He She They Our My Your Their A An And But Or So If Then When What Why How Where Who Which
Yes No Ok Okay Thanks Thank Hi Hello Hey Sure Also Just Maybe Please Let Let's Not Now Here's
Today Yesterday Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday Great
Good Nice Well Oh Sounds Really Actually Anyway After Before Because Since Still Yeah Wow
January February March April May June July August September October November December
Is Are Was Were Do Does Did Can Could Would Should Will Have Has Had There Here Once Every
Decision Heads Noted Agreed Perfect Fair Booked Added Updated Done Short Two Both One Next
Last Some Any All None Note Warning Error Go Book Put Send Check Restoring Checked Costs
Someone Weird Diff Terraform Get Fail Old Never Always Drop Keep Treat Generate Replace""".split())


@lru_cache(maxsize=1)
def _tagger():  # type: ignore[no-untyped-def]
    from .words import _segmenter

    return _segmenter()


def _is_common_word(word: str) -> bool:
    """A dictionary word that is not a person's name (周五, 高峰, 方案)."""
    if word in NOT_NAMES:
        return True
    seg = _tagger()
    if not seg.has_word(word):
        return False
    tags = [t for w, t in seg.tag(word, False) if w == word]
    return bool(tags) and tags[0] != "nr"


def chinese_names(text: str, known: Iterable[str] = ()) -> list[str]:
    """Chinese person names in `text`, in order of first appearance."""
    found: dict[str, int] = {}
    known_names = [k for k in known if k and re.fullmatch(r"[\u4e00-\u9fff]{2,4}", k)]
    for name in known_names:
        for m in re.finditer(re.escape(name), text):
            found.setdefault(name, m.start())
    for m in _RELATION_NAME_RE.finditer(text):
        name = m.group(1)
        if name.endswith(("的", "过", "在", "说", "也", "和", "要", "对")):
            name = name[:-1]
        if len(name) >= 2 and name not in NOT_NAMES and not any(name in k for k in found):
            found.setdefault(name, m.start(1))

    def plausible(name: str, start: int) -> bool:
        end = start + len(name)
        if any(name in k or k in name for k in found) or _is_common_word(name):
            return False
        if re.match(_PLACE, text[end:end + 1]) or re.search(_PLACE + "$", name):
            return False  # a place: 张杨路, 金杨路
        if re.search(_TITLE + "$", name) or re.search(r"[的了是在和与跟也都就过]$", name):
            return False  # 欧阳总: a surname and a title, not a name
        return not (name[0] == "周" and re.search(r"[这本上下每前后几一两三四五六七八九十]$",
                                                  text[max(0, start - 1):start]))

    for word, tag in _tagger().tag(text, True):
        if tag == "nr" and 2 <= len(word) <= 3 and word[0] in SURNAMES:
            pos = text.find(word)
            if plausible(word, pos):
                found.setdefault(word, pos)
    for m in re.finditer(r"[\u4e00-\u9fff]+", text):
        run, base = m.group(0), m.start()
        for i in range(len(run)):
            compound = run[i:i + 2] in COMPOUND_SURNAMES
            if not compound and run[i] not in SURNAMES:
                continue
            surname = run[i:i + 2] if compound else run[i]
            rest = run[i + len(surname):]
            for n in (1, 2) if compound else (2, 1):
                given = rest[:n]
                if len(given) < n:
                    continue
                name, start = surname + given, base + i
                if not plausible(name, start):
                    continue
                before = text[max(0, start - 1):start]
                after = text[start + len(name):start + len(name) + 3]
                seg = _tagger()
                if compound and surname not in ("东方", "南宫", "西门"):
                    one = len(rest) < 2 or re.match(r"[的了是在和与跟也都就过，。、\s]", rest[1]) \
                        or seg.has_word(rest[1:3])
                    if (n == 1) == bool(one):
                        found.setdefault(name, start)
                        break
                    continue
                if re.fullmatch(_BEFORE, before or "-") and re.match(_AFTER, after) or \
                        (re.match(r"、", after) or before == "、"):
                    found.setdefault(name, start)
                    break
    return sorted(found, key=lambda n: found[n])


PINYIN_SURNAMES = frozenset("""li wang zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo
he gao lin luo zheng liang xie song tang han feng deng cao peng zeng xiao tian dong pan yuan cai
jiang yu du ye cheng wei su lu ding ren shen yao jin qian fang bai zou meng qin qiu hou""".split())
_PERSON_VERB_RE = re.compile(r"^(?:'s\b|\s+(?:asked|said|says|mentioned|wants|insisted|approved|"
                             r"agreed|joined|owns|is\s+on\s+call))")


def english_person_names(text: str, known: Iterable[str] = ()) -> list[str]:
    """English names that are people: known speakers, pinyin names ("Li Na", "Chen Jing"),
    and names followed by a person's verb or possessive ("Dana asked", "Li Na's team")."""
    known = [k for k in known if k]
    out = []
    for name in english_names(text, known):
        words = name.split()
        end = text.find(name) + len(name)
        if name in known or (len(words) == 2 and words[0].lower() in PINYIN_SURNAMES) or \
                _PERSON_VERB_RE.match(text[end:end + 20]):
            out.append(name)
    return out


def english_names(text: str, known: Iterable[str] = ()) -> list[str]:
    """Capitalised names that are not sentence openers or common words."""
    out: list[str] = [k for k in known if k and re.search(r"[A-Za-z]", k) and k in text]
    for m in _CAP_RE.finditer(text):
        name = m.group(0)
        words = name.split()
        while words and words[0] in STOP_CAPS:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words)
        start = m.start() + m.group(0).find(name)
        sentence_start = start == 0 or re.search(r"[.!?:]\s*$|\n\s*$", text[:start])
        if sentence_start and len(words) == 1 and name not in out:
            continue
        if len(name) >= 3 and name not in out:
            out.append(name)
    return out


_ZH_KIN = "妈妈|妈|爸爸|爸|母亲|父亲|老公|老婆|妻子|丈夫|爱人|女儿|儿子|孩子|哥哥|姐姐|弟弟|妹妹|家人|同事|导师"


def first_person_zh(text: str, name: str) -> str:
    """我 → the speaker in a Chinese sentence (我们, 我司, 我方, 自我 stay)."""
    text = re.sub(r"我们家", f"{name}家", text)
    text = re.sub(rf"我的?({_ZH_KIN})", lambda m: f"{name}的{m.group(1)}", text)
    text = re.sub(r"我的", f"{name}的", text)
    text = re.sub(r"我家", f"{name}家", text)
    return re.sub(r"(?<!自)我(?![们司方])", name, text)


def first_person_en(sentence: str, name: str) -> str:
    """'I prefer tea' said by Alice → 'Alice prefers tea'."""
    s = re.sub(r"(?i)\bi\s+(?:really\s+|also\s+)?(prefer|like|love|enjoy|hate|dislike|want|need)\b",
               lambda m: f"{name} {m.group(1).lower()}s", sentence)
    s = re.sub(r"(?i)\bi'd\s+rather\b", f"{name} would rather", s)
    s = re.sub(r"(?i)\bi'd\s+like\b", f"{name} would like", s)
    s = re.sub(r"(?i)\bi(?:'m|\s+am)\b", f"{name} is", s)
    s = re.sub(r"(?i)\bi\s+was\b", f"{name} was", s)
    s = re.sub(r"(?i)\bi(?:'ve|\s+have)\b", f"{name} has", s)
    s = re.sub(r"(?i)\bi(?:'ll|\s+will)\b", f"{name} will", s)
    s = re.sub(r"\bI\b", name, s)
    s = re.sub(r"(?i)\bmy\b", f"{name}'s", s)
    return re.sub(r"(?i)\bme\b", name, s)


def first_person(text: str, name: str | None) -> str:
    """The speaker's name for 我 and I, in either language (a sentence may mix them)."""
    if not name:
        return text
    out = first_person_en(text, name) if re.search(r"(?i)\b(?:i|i'm|i'd|i'll|i've|my|me)\b",
                                                   text) else text
    return first_person_zh(out, name) if "我" in out else out


def third_person_zh(text: str, names: Iterable[str], context: str = "") -> str:
    """他/她 → the one other person named before it (in `context`, the turn so far, or the
    sentence): 我跟他换班了 → 我跟赵磊换班了 when 赵磊 is the only other name; left alone when
    there is none or more than one."""
    names = list(names)
    out, pos = [], 0
    for m in re.finditer(r"(?<![其])[他她](?![们人])", text):
        before = context + text[:m.start()]
        named = [n for n in names if n in before]
        if len(set(named)) == 1:
            out.append(text[pos:m.start()])
            out.append(named[0])
            pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def name_forms(name: str) -> set[str]:
    """The ways a question may write a person's name, casefolded: the name, an English first
    name ("sarah" for Sarah Lin), and a Chinese name in pinyin ("li na", "lina" for 李娜;
    pypinyin, when installed)."""
    name = name.strip()
    forms = {name.casefold()} if name else set()
    words = name.split()
    if len(words) >= 2 and re.fullmatch(r"[A-Za-z][A-Za-z'-]+", words[0]) and len(words[0]) >= 3:
        forms.add(words[0].casefold())
    if re.fullmatch(r"[\u4e00-\u9fff]{2,4}", name):
        try:
            from pypinyin import lazy_pinyin
        except ImportError:  # pragma: no cover - pypinyin is a dependency
            return forms
        syllables = lazy_pinyin(name)
        surname = 2 if name[:2] in COMPOUND_SURNAMES else 1
        family, given = "".join(syllables[:surname]), "".join(syllables[surname:])
        forms |= {f"{family} {given}", f"{given} {family}", family + given}
    return forms
