"""Beyond the tutorial: text that came from a server or a model, made safe to show in a terminal.

The tutorial prints what servers and models send as it is, so an escape sequence in a tool name
or a result could rewrite the permission prompt, hide text or write the clipboard. clean() makes
every control character and escape sequence visible; shorten(), fit() and squeeze() bound a line (masking
what they cut: no secret is shown in part); shown_arguments() lays out a call's arguments for the permission
prompt. What is secret, and its masking, is secrets/'s.
"""
import itertools
import json
import re

from beyond.secrets import mask

# An escape sequence: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), or ESC and one character.
ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?", re.DOTALL)
# C0 controls but tab and newline, DEL, and the C1 controls (which some terminals obey like ESC).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that reorder or hide text: bidirectional overrides and isolates, zero-width ones.
INVISIBLE = re.compile(r"[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
# One decoder for every message (loads_or_none).
JSON_DECODER = json.JSONDecoder()


def clean(text: str, one_line: bool = False) -> str:
    """Escape sequences and control characters shown as \\x1b[2K, \\x07 ... (newline and tab kept
    unless one_line); bidi and zero-width characters as <U+202E> when one_line (names, prompts)."""
    text = ESCAPE.sub(lambda m: _visible(m.group()), str(text))
    text = CONTROL.sub(lambda m: _visible(m.group()), text)
    if one_line:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
        text = INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
    return text


def _visible(chars: str) -> str:
    return "".join(f"\\x{ord(c):02x}" if c < " " or "\x7f" <= c <= "\x9f" else c for c in chars)


# A text that is cut is masked first (secrets/), this much past the cut: a secret that reaches over the cut
# is masked whole, never shown in part (the longest a login keeps is 16 KB).
CUT_MARGIN = 16 * 1024


def shorten(text: str, limit: int = 200) -> str:
    """At most `limit` characters of the stripped text, and how long it was when cut."""
    text = text.strip()
    return text if len(text) <= limit else mask(text[:limit + CUT_MARGIN])[:limit] + f"... ({len(text)} chars)"


# The permission prompt names at most this many values; a call with more says how many it leaves out.
MAX_SHOWN_VALUES = 40
# A value shortened for the prompt keeps at least this much of its head and tail together.
MIN_SHOWN_VALUE = 24
# Nested arguments are shown key by key this deep; deeper ones as one shortened JSON value.
MAX_SHOWN_DEPTH = 6
PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")


def shown_arguments(args: dict, limit: int, mask=str) -> str:
    """The arguments as JSON when that fits in `limit`; otherwise every key with its value shortened
    on its own (head, length, tail), so a long value cannot push another out of sight. `mask` is
    applied to each piece before it is shortened, so a secret is never shown in part."""
    whole = mask(json.dumps(args, ensure_ascii=False, default=str))
    if len(whole) <= limit:
        return whole
    total = sum(1 for _ in _leaves(args, ""))
    budget = max(MIN_SHOWN_VALUE, limit // max(1, min(total, MAX_SHOWN_VALUES)))
    def one(value: object) -> str:  # a string's length is its own, not its JSON's
        text = mask(json.dumps(value, ensure_ascii=False, default=str))
        return squeeze(text, budget, len(value) if isinstance(value, str) else None)
    parts = [f"{mask(path)}={one(value)}" for path, value in itertools.islice(_leaves(args, ""), MAX_SHOWN_VALUES)]
    more = f", and {total - MAX_SHOWN_VALUES:,} more values not shown (all are sent)" \
        if total > MAX_SHOWN_VALUES else ""
    return "{" + ", ".join(parts) + more + "}"


def _leaves(value: object, path: str, depth: int = 0):
    """(path, value) for every value of nested arguments: note, opts.cmd, files[0]."""
    if isinstance(value, dict) and value and depth < MAX_SHOWN_DEPTH:
        for key, item in value.items():
            name = key if PLAIN_KEY.fullmatch(key) else squeeze(json.dumps(key, ensure_ascii=False), 64)
            yield from _leaves(item, f"{path}.{name}" if path else name, depth + 1)
    elif isinstance(value, list) and value and depth < MAX_SHOWN_DEPTH:
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]", depth + 1)
    else:
        yield path or "(value)", value


def fit(text: str, width: int) -> str:
    """At most `width` characters, ending in "..." when cut (a line on a terminal of that width)."""
    return text if len(text) <= width else mask(text[:width + CUT_MARGIN])[:max(width - 3, 0)] + "..."


def squeeze(text: str, limit: int, length: int | None = None) -> str:
    """At most about `limit` characters: the head and the tail, and the length between them (`length`:
    the length of what `text` writes out, a string's own before JSON escaped it)."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2)
    head, tail = mask(text[:half + CUT_MARGIN])[:half], mask(text[-half - CUT_MARGIN:])[-half:]
    return f"{head}...({len(text) if length is None else length:,} chars)...{tail}"


def loads_or_none(text: str) -> object:
    """The JSON value `text` holds, or None where it holds none (or is nested deeper than Python parses).
    Text that starts with its value takes the short way (raw_decode()), the rest json.loads()."""
    try:
        value, end = JSON_DECODER.raw_decode(text)
        if end == len(text) or text[end:].isspace():
            return value
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(text)  # white space before the value, or no JSON: the long way says which
    except (ValueError, RecursionError):
        return None
