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
4. **spaced letters joined**: "I g n o r e" → "Ignore", "忽 略 之 前" → "忽略之前".

Line breaks stay: the detector reads lines (markers, pasted material) and, joined by
`flat`, sentences. `hidden(text)` is the text smuggled in Unicode tag characters (U+E0020–
U+E007E spell ASCII invisibly), which a model may still read: the detector reads it too.
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
