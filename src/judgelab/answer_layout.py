"""What surrounds a rating in an answer's text without being one: chat-template tags and list markers.

An OpenAI-compatible server that applies a chat template badly (llama.cpp's server with a GGUF's
template, a base model continuing the conversation) leaves the template's tags in the answer, and a
model that goes on writing a new turn writes lists: ``Answer: [INST]1. English is not my first
language…`` holds no rating, though its first number is 1, and neither does a turn the model wrote
for the user (``[INST]1[/INST]``). :mod:`judgelab.parse` reads an answer after these two steps. Both keep the text's length (a tag becomes a line break and blanks, a marker
blanks), so every position in the result is a position in the answer.
"""
from __future__ import annotations

import re

__all__ = ["turn_breaks", "strip_list_markers"]

# Chat-template tags (Llama 2 / Mistral, ChatML, Llama 3, Gemma, Phi, DeepSeek, sentence markers),
# with the role name that follows a turn's opening tag.
_CHAT_TAG_RE = re.compile(
    r"\[/?(?:INST|SYS|SYSTEM_PROMPT)\]|<</?SYS>>|</?s>|<(?:bos|eos|end_of_turn)>"
    r"|<start_of_turn>(?:user|model|system)?"
    r"|<\|start_header_id\|>[^<\n]{0,40}?<\|end_header_id\|>"
    r"|<\|im_start\|>(?:system|user|assistant)?"
    r"|<[|\uff5c][^<>|\uff5c\s]{1,40}[|\uff5c]>"  # <|im_end|>, <|eot_id|>, <|assistant|>, <｜end▁of▁sentence｜> …
)
# A numbered item's number: "1. The story", "2) Fluency", "3.English" (a letter follows: not "3.", "3.5", "3. 4").
_ITEM_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3})[.)](?=[ \t]*[^\W\d_])")
_LINE_START_RE = re.compile(r"[ \t]*(?:[-\u2022+>][ \t]*)?")  # blanks, maybe a bullet or a quote mark
_BULLET_RE = re.compile(r"^([ \t]*)[-\u2022+](?=[ \t]+\S)", re.MULTILINE)


# Tags that open a turn of the user or the system: what follows, up to the next tag, is not the judge's answer.
_OTHERS_TURN_RE = re.compile(r"\[INST\]|\[SYS(?:TEM_PROMPT)?\]|<<SYS>>|<start_of_turn>(?:user|system)"
                             r"|<\|im_start\|>(?:user|system)|<\|(?:user|system)\|>"
                             r"|<\|start_header_id\|>\s*(?:user|system)\s*<\|end_header_id\|>")


def turn_breaks(text: str) -> str:
    """Read every chat-template tag as what it is, a turn boundary, and leave out the turns a model
    wrote for the user or the system (``[INST]1[/INST]`` is no answer of the judge's).

    Args:
        text: an answer.

    Returns:
        The text, of the same length: each tag (with the role name after a turn's opening tag) a line
        break and blanks; the text of a user's or system's turn, up to the next tag, blanks (line
        breaks kept).

    Example:
        >>> turn_breaks("<|im_start|>assistant\\n5<|im_end|>").split()
        ['5']
        >>> turn_breaks("Rate it. [INST]1[/INST] 4").split()
        ['Rate', 'it.', '4']
    """
    chars = list(text)
    tags = list(_CHAT_TAG_RE.finditer(text))
    for i, tag in enumerate(tags):
        chars[tag.start():tag.end()] = "\n" + " " * (tag.end() - tag.start() - 1)
        if _OTHERS_TURN_RE.fullmatch(tag.group(0)):
            end = tags[i + 1].start() if i + 1 < len(tags) else len(text)
            chars[tag.end():end] = [c if c == "\n" else " " for c in text[tag.end():end]]
    return "".join(chars)


def strip_list_markers(text: str) -> str:
    """Blank the markers of a list: a number followed by ``.`` or ``)`` and then text ("1. English is
    not …", "2) Fluency is fine"), at the start of a line (after a chat-template tag too, once
    :func:`turn_breaks` made it a line break), or the next number of the same list after a sentence
    ends ("1. The story is coherent. 2. Fluency is fine."); and a bullet (``-``, ``•``, ``+``) at a
    line's start. A rating followed by its reason on its line ("Rating: 3. Coherent.") stays, as do
    "3." and "3" alone.

    Args:
        text: an answer (after :func:`turn_breaks`).

    Returns:
        The text, of the same length, with the markers blanked.

    Example:
        >>> strip_list_markers("1. The story is coherent. 2. Fluency is fine.").strip()
        'The story is coherent.    Fluency is fine.'
        >>> strip_list_markers("Rating: 3. Coherent.")
        'Rating: 3. Coherent.'
    """
    chars = list(_BULLET_RE.sub(lambda m: m.group(1) + " ", text))
    previous: int | None = None
    for m in _ITEM_NUMBER_RE.finditer(text):
        before = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        number = int(m.group(1))
        opens_line = _LINE_START_RE.fullmatch(before) is not None
        continues = previous is not None and number == previous + 1 and before.rstrip()[-1:] in {".", "!", "?", ";"}
        if opens_line or continues:
            chars[m.start():m.end()] = " " * (m.end() - m.start())
            previous = number
    return "".join(chars)
