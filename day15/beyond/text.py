"""Beyond the tutorial: text that came from a server or a model, made safe to show in a terminal.

The tutorial prints what servers and models send as it is, so an escape sequence in a tool name
or a result could rewrite the permission prompt, hide text or write the clipboard. clean() makes
every control character and escape sequence visible; shorten() bounds a line. And the tutorial
keeps only the text parts of a tool result; content_text() describes the others. mask_secrets() keeps
the environment's secrets out of every prompt, result and line the agent shows or sends.
"""
import functools
import itertools
import json
import os
import re

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


# A server's text in a question is shown up to this many lines, each marked as the server's.
MAX_QUOTED_LINES = 40
QUOTE = "  | "


def quoted(text: object, limit: int) -> str:
    """A server's words under the header that names it: at most `limit` characters and
    MAX_QUOTED_LINES lines, each indented and marked (a newline cannot draw a line of ours),
    controls, bidi and invisible characters made visible."""
    lines = shorten(str(text), limit).split("\n")
    more = [f"{QUOTE}... ({len(lines) - MAX_QUOTED_LINES} more lines)"] if len(lines) > MAX_QUOTED_LINES else []
    return "\n".join([QUOTE + clean(line, one_line=True) for line in lines[:MAX_QUOTED_LINES]] + more)


def _visible(chars: str) -> str:
    return "".join(f"\\x{ord(c):02x}" if c < " " or "\x7f" <= c <= "\x9f" else c for c in chars)


def shorten(text: str, limit: int = 200) -> str:
    """At most `limit` characters of the stripped text, and how long it was when cut."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


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
    return text if len(text) <= width else text[:max(width - 3, 0)] + "..."


def squeeze(text: str, limit: int, length: int | None = None) -> str:
    """At most about `limit` characters: the head and the tail, and the length between them (`length`:
    the length of what `text` writes out, a string's own before JSON escaped it)."""
    if len(text) <= limit:
        return text
    half = max(1, limit // 2)
    return f"{text[:half]}...({len(text) if length is None else length:,} chars)...{text[-half:]}"


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


# Environment variables whose names contain one of these hold secrets and are never shown.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
# Shorter values would mask ordinary words and digits all over the output.
MIN_SECRET_LEN = 8
# A value this long is masked wherever it stands, glued to other letters too (no word holds a 12-character
# key by chance); a shorter one only as a whole token, so the digits in a date or a word stay as they are.
ANYWHERE_LEN = 12
# What local endpoints take as a key (Ollama, LM Studio, vLLM) and what examples write: words, not secrets.
PLACEHOLDER_KEYS = {"none", "null", "empty", "test", "dummy", "fake", "placeholder", "changeme", "ollama", "lm-studio",
                    "lmstudio", "no-key", "nokey", "not-needed", "sk-no-key-required", "sk-xxx", "sk-test", "sk-dummy",
                    "sk-1234", "sk-placeholder"}
# A password in a URL (scheme://user:password@host) is masked wherever it appears.
# (Bounded repeats, so a long run of letters costs linear time, not quadratic.)
URL_PASSWORD = re.compile(r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^/\s:@]{0,256}:)[^/\s@]{1,1024}@")


def mask_secrets(text: str) -> str:
    """Replace the value of every secret-named environment variable that could be a secret (as written,
    and as JSON writes it inside a string; one of ANYWHERE_LEN characters or more wherever it stands, a
    shorter one as a whole token) by [REDACTED:<name>], and a URL's password by [REDACTED]."""
    names, pattern = _secrets(tuple((name, os.environ.get(name)) for name in os.environ if SECRET_NAME.search(name)))
    if pattern is not None:
        text = pattern.sub(lambda match: f"[REDACTED:{names[match.group(0)]}]", text)
    return URL_PASSWORD.sub(r"\1[REDACTED]@", text)


@functools.lru_cache(maxsize=4)  # the environment rarely changes: its pattern is built once
def _secrets(variables: tuple[tuple[str, str | None], ...]) -> tuple[dict[str, str], "re.Pattern | None"]:
    """(each value that could be a secret -> its name, one pattern matching any of them: a long one anywhere,
    a short one as a whole token)."""
    found = {}
    for name, value in variables:
        if value is not None and len(value) >= MIN_SECRET_LEN and value.lower() not in PLACEHOLDER_KEYS:
            found.update({value: name, json.dumps(value, ensure_ascii=False)[1:-1]: name})
    long = "|".join(re.escape(v) for v in sorted(found, key=len, reverse=True) if len(v) >= ANYWHERE_LEN)
    short = "|".join(re.escape(v) for v in sorted(found, key=len, reverse=True) if len(v) < ANYWHERE_LEN)
    parts = [long] * bool(long) + [f"(?<![A-Za-z0-9])(?:{short})(?![A-Za-z0-9])"] * bool(short)
    return found, re.compile("|".join(parts)) if parts else None


class MaskedStream:
    """Text that comes in pieces (a streamed answer), masked as mask_secrets() masks it, with a secret
    split across pieces caught: what could be the start of one is held back until the next piece or rest()."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """What may be shown now of everything fed so far, masked."""
        names, pattern = _secrets(tuple((n, os.environ.get(n)) for n in os.environ if SECRET_NAME.search(n)))
        text, self._held = self._held + piece, ""
        if pattern is None:
            return mask_secrets(text)
        cut = max(0, len(text) - max(map(len, names)) + 1)  # a secret not yet whole starts after this
        for match in pattern.finditer(text):
            if match.start() < cut < match.end():
                cut = match.end()
        text, self._held = text[:cut], text[cut:]
        return mask_secrets(text)

    def rest(self) -> str:
        """What is held back, masked: the stream has ended."""
        text, self._held = self._held, ""
        return mask_secrets(text)
