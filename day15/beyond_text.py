"""Beyond the tutorial: text that came from a server or a model, made safe to show in a terminal.

The tutorial prints what servers and models send as it is, so an escape sequence in a tool name
or a result could rewrite the permission prompt, hide text or write the clipboard. clean() makes
every control character and escape sequence visible; shorten() bounds a line.
"""
import re

# An escape sequence: CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), or ESC and one character.
ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?", re.DOTALL)
# C0 controls but tab and newline, DEL, and the C1 controls (which some terminals obey like ESC).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Characters that reorder or hide text: bidirectional overrides and isolates, zero-width ones.
INVISIBLE = re.compile(r"[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


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


def shorten(text: str, limit: int = 200) -> str:
    """At most `limit` characters of the stripped text, and how long it was when cut."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
