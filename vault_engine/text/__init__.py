"""text — language, for Chinese and English alike: the tokenizer shared by compile and recall
(`tokens`) and secret detection and redaction (`secrets`).

May import: the ground only (and the standard library and language libraries). No room's
knowledge of notes is needed to read text.
"""
