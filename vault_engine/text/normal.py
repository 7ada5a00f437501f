"""Text as the injection detector reads it: what a model would read, not how it is spelled.

A model reads "Ig​nore" (a zero-width space inside), "ｉｇｎｏｒｅ" (full-width), "іgnоrе"
(Cyrillic і and о), "𝐢𝐠𝐧𝐨𝐫𝐞" (mathematical bold), "i g n o r e" and "忽 略" as the words they
look like, and an order split over a line break as one order. `reading(text)` is that text:

1. **NFKC** (`unicodedata`): full-width and mathematical letters, ligatures, compatibility
   spaces become their plain forms;
2. **invisible characters removed**: every format character (Unicode category Cf: zero-width
   space, joiners, soft hyphen, word joiner, BOM, bidi embeddings, overrides and isolates, tag
   characters …), the other default-ignorable code points (variation selectors, Hangul
   fillers, the combining grapheme joiner …) and combining marks (so "ı̷g̷n̷o̷r̷e̷" is "ignore");
3. **look-alike letters folded to Latin**: a letter of another script that Unicode's security
   data (confusables.txt, as the `confusable-homoglyphs` package ships it) lists as confusable
   with one Latin letter becomes that letter — Cyrillic а е о р с і, Greek ο Α Ν … — except
   Chinese, Japanese and Korean characters, which are never folded;
4. **traditional characters folded to simplified** (無視先前所有設定 → 无视先前所有设定): the
   characters the word classes of text/lexicon.py are written with, and the common ones
   around them;
5. **spaced letters joined**: "I g n o r e" → "Ignore", "忽 略 之 前" → "忽略之前".

Line breaks stay: the detector reads lines (markers, pasted material) and, joined by
`flat`, sentences. The detector also reads three other views of a text, each only when the
text has what it needs: `hidden(text)`, the text smuggled in Unicode tag characters (U+E0020–
U+E007E spell ASCII invisibly), which a model may still read; `displayed(text)`, the text as
it shows on screen where a right-to-left override (U+202E) reverses a run ("。令指有所的前之略
忽" shows as "忽略之前的所有指令。"); and `unleet(text)`, words with digits for letters read as
letters ("1gn0r3 y0ur ru135" → "ignore your rules"; a 1 reads as i or l, whichever makes a word
the word classes know).
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Default-ignorable code points that are not Cf (DerivedCoreProperties.txt): combining grapheme
# joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors, variation
# selectors, and the braille blank that renders as nothing.
_IGNORABLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f"
                        "\uffa0\U000e0100-\U000e01ef]")
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]{3,}")
# Characters that are never a disguise: ASCII, and the scripts and punctuation of Chinese,
# Japanese and Korean text (a run of them needs no per-character look).
_PLAIN = re.compile("[\x00-\x7f\u2010-\u2027\u2030-\u205e\u3000-\u303f\u3040-\u30ff"
                    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")
_SPACED_LATIN = re.compile(r"(?<![A-Za-z])[A-Za-z](?:[ .\-_·][A-Za-z]){2,}(?![A-Za-z])")
_SPACED_CJK = re.compile(r"(?<=[\u4e00-\u9fff，。：；！？、,:;!?])[ \t\u3000]+(?=[\u4e00-\u9fff，。：；！？、,:;!?])")
_NEVER_FOLDED = ("HAN", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO")
# traditional → simplified, for the characters of the word classes and the common ones around
# them (妳 and 祢 read as 你)
_TRADITIONAL_PAIRS = (
    "無无 視视 設设 現现 個个 沒没 記记 憶忆 說说 規规 則则 約约 審审 權权 開开 發发 "
    "從从 這这 們们 請请 將将 對对 話话 輸输 碼码 鑰钥 傳传 務务 當当 後后 號号 證证 "
    "統统 廢废 舊旧 擬拟 戲戏 於于 為为 與与 經经 過过 違违 導导 讀读 總总 結结 錄录 "
    "機机 聽听 讓让 遺遗 棄弃 拋抛 繞绕 關关 閉闭 換换 蓋盖 刪删 淨净 蹤踪 復复 歷历 "
    "數数 據据 庫库 帳账 戶户 寫写 進进 檔档 資资 訊讯 電电 郵邮 網网 頁页 絡络 鏈链 "
    "貼贴 轉转 給给 訴诉 顯显 內内 腳脚 終终 級级 員员 體体 驗验 測测 試试 僅仅 實实 "
    "隱隐 偽伪 僞伪 裝装 稱称 應应 該该 須须 謝谢 幫帮 並并 卻却 邊边 腦脑 擋挡 濾滤 "
    "師师 長长 門门 問问 題题 麼么 嗎吗 誰谁 處处 準准 條条 啟启 動动 態态 類类 樣样 "
    "種种 頭头 斷断 續续 線线 強强 調调 錯错 誤误 難难 義义 護护 險险 變变 項项 優优 "
    "覽览 選选 擇择 註注 釋释 監监 聯联 繫系 係系 維维 運运 營营 觸触 達达 離离 屬属 "
    "書书 標标 簽签 頻频 圖图 單单 習习 慣惯 間间 時时 來来 會会 國国 語语 學学 術术 "
    "專专 業业 願愿 辦办 歸归 檢检 齊齐 簡简 謂谓 裡里 裏里 範范 壓压 雙双 雜杂 攔拦 "
    "銷销 決决 議议 執执 徹彻 絕绝 礙碍 辭辞 職职 責责 驟骤 憑凭 鎖锁 錢钱 買买 賣卖 "
    "貨货 購购 價价 罰罚 隨随 嚴严 厲厉 顧顾 慮虑 確确 認认 許许 訂订 計计 劃划 畫画 "
    "備备 竊窃 盜盗 駭骇 盡尽 屆届 亂乱 衝冲 撥拨 揮挥 灑洒 隊队 組组 織织 團团 儲储 "
    "參参 衛卫 憲宪 啓启 兒儿 喚唤 階阶 層层 淺浅 熱热 風风 鬆松 脫脱 擺摆 輕轻 氣气 "
    "觀观 點点 滅灭 殺杀 爭争 產产 軟软 緒绪 妳你 祢你 ")
_TRADITIONAL = {ord(p[0]): p[1] for p in _TRADITIONAL_PAIRS.split()}
_TRADITIONAL_RE = re.compile("[" + "".join(p[0] for p in _TRADITIONAL_PAIRS.split()) + "]")
# a right-to-left override and the run it reverses on screen (to the next pop, isolate end or
# line end)
_RLO_RUN = re.compile("\u202e([^\u202c\u2069\n]*)")
# a word with digits standing for letters: letters and digits mixed, at least one of each
_LEET_WORD = re.compile(r"(?<![\w@$])(?=[A-Za-z@$]*[0-9])(?=[0-9]*[A-Za-z@$])[A-Za-z0-9@$]{2,}(?![\w@$])")
_LEET_HINT = re.compile(r"[A-Za-z][0-9]|[0-9][A-Za-z]")
_LEET = str.maketrans("0345789@$", "oeastbgas")


@functools.lru_cache(maxsize=1)
def _latin_lookalikes() -> dict[int, str]:
    """Letter of another script → the one Latin letter Unicode lists it as confusable with.
    Read from the package's data file only when a text has such a letter (about 0.1 s, once
    per process); importing the package's module would also import urllib."""
    import json
    from importlib.resources import files

    data = json.loads((files("confusable_homoglyphs") / "confusables.json").read_text("utf-8"))
    cats = json.loads((files("confusable_homoglyphs") / "categories.json").read_text("utf-8"))
    scripts: list[tuple[int, int, str]] = [(int(a), int(b), s) for a, b, s, _ in cats["code_points_ranges"]]
    import bisect

    starts = [r[0] for r in scripts]

    def script(ch: str) -> str:
        i = bisect.bisect_right(starts, ord(ch)) - 1
        return scripts[i][2] if i >= 0 and scripts[i][0] <= ord(ch) <= scripts[i][1] else ""

    table: dict[int, str] = {}
    for ch, glyphs in data.items():
        if len(ch) != 1 or ch.isascii() or not unicodedata.category(ch).startswith("L") \
                or script(ch) in _NEVER_FOLDED:
            continue
        latin = next((g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()
                      and g["c"].isalpha()), None)
        if latin:  # the skeleton writes every I-like glyph as "l": a capital one reads as I
            table[ord(ch)] = "I" if latin == "l" and ch.isupper() else latin
    return table


def hidden(text: str) -> str:
    """The ASCII text spelled in Unicode tag characters inside `text` ("" when none)."""
    if text.isascii():
        return ""
    return " ".join("".join(chr(ord(c) - 0xE0000) for c in m.group(0))
                    for m in _TAG_RUN.finditer(text))


def displayed(text: str) -> str:
    """`text` as it shows on screen where a right-to-left override reverses a run ("" when it
    has none)."""
    if "\u202e" not in text:
        return ""
    return _RLO_RUN.sub(lambda m: m.group(1)[::-1], text)


@functools.lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    """The English words the word classes are written with (text/lexicon.py), which tell
    whether a 1 in a leet word is an i or an l."""
    from vault_engine.text import lexicon

    words: set[str] = set()
    for value in vars(lexicon).values():
        if isinstance(value, str):
            words.update(w.lower().rstrip("s") for w in re.findall(r"[A-Za-z]{2,}", value))
    return frozenset(words | {"new", "now", "you", "are", "an", "and", "with", "no", "from", "on"})


def unleet(text: str) -> str:
    """`text` with its leet words read as letters ("1gn0r3 y0ur pr3v10u5 ru135" → "ignore your
    previous rules"), or "" when it has fewer than two such words (a "v2", an "mp3")."""
    if not _LEET_HINT.search(text):
        return ""
    words = _LEET_WORD.findall(text)
    if len(words) < 2:
        return ""
    known = _known_words()

    def word(m: re.Match[str]) -> str:
        base = m.group(0).translate(_LEET)
        as_i, as_l = base.replace("1", "i"), base.replace("1", "l")
        return as_l if as_l.lower().rstrip("s") in known \
            and as_i.lower().rstrip("s") not in known else as_i
    return _LEET_WORD.sub(word, text)


def reading(text: str) -> str:
    """`text` as a model reads it (see the module docstring); line breaks kept."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        rest = _PLAIN.sub("", text)  # what is neither ASCII nor Chinese, Japanese or Korean
        if rest:
            kinds = {unicodedata.category(c) for c in set(rest)}
            if kinds & {"Cf", "Mn", "Me"} or _IGNORABLE.search(rest):
                text = "".join(c for c in unicodedata.normalize("NFKD", text)
                               if unicodedata.category(c) not in ("Cf", "Mn", "Me"))
                text = unicodedata.normalize("NFC", _IGNORABLE.sub("", text))
            if any(k.startswith("L") for k in kinds):
                text = text.translate(_latin_lookalikes())
        if _TRADITIONAL_RE.search(text):
            text = text.translate(_TRADITIONAL)
        if "\u3000" in text or " " in text:
            text = _SPACED_CJK.sub("", text)
    if " " in text or "." in text or "-" in text:
        text = _SPACED_LATIN.sub(lambda m: re.sub(r"[ .\-_·]", "", m.group(0)), text)
    return text


_LEAD = re.compile(r"^[ \t]*(?:[+-](?=[ \t]*[#/*>]))?[ \t]*(?:(?:>[ \t]?)+|[-+*][ \t]+|\d{1,2}[.)][ \t]+|"
                   r"#{1,6}[ \t]+|//+[ \t]?|#(?![#!])[ \t]?|--[ \t]|/?\*+[ \t]?)?", re.M)


def flat(text: str) -> str:
    """`text` with its lines joined into running text: a sentence split over a line break
    (or a blank line, or quoted lines "> …") reads as one. Line-leading quote, list and
    comment markers go; a break between two Chinese characters joins them without a space."""
    if "\n" not in text:
        return text
    lines = [_LEAD.sub("", line, count=1).strip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if not line:
            continue
        if out and not (_is_cjk(out[-1][-1]) and _is_cjk(line[0])):
            out.append(" ")
        out.append(line)
    return "".join(out)


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"
