"""Beyond the tutorial: text that came from a server or a model, made safe to show in a terminal.

The tutorial prints what servers and models send as it is, so an escape sequence in a tool name
or a result could rewrite the permission prompt, hide text or write the clipboard. clean() makes
every control character and escape sequence visible; shorten() bounds a line. And the tutorial
keeps only the text parts of a tool result; content_text() describes the others.
"""
import json
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


def loads_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def content_text(result: dict) -> str:
    """The text of a tools/call result; other content is described; empty gets a placeholder."""
    parts = [_content_part(item) for item in result.get("content") or [] if isinstance(item, dict)]
    text = "\n".join(part for part in parts if part)
    if not text and result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"], ensure_ascii=False)  # a result with only structured content
    return text or "(no content)"


def _content_part(item: dict) -> str:
    """One content item as text: text itself; images, audio, binary resources and links described."""
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {_binary(item, 'data')}]"
    if kind == "resource":
        resource = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        if "text" in resource:
            return str(resource["text"])
        return f"[resource: {resource.get('uri', '?')}" + (f", {_binary(resource, 'blob')}]" if "blob" in resource else "]")
    if kind == "resource_link":
        return f"[link: {item.get('uri', '?')}]"
    return f"[{kind} content]"


def _binary(item: dict, key: str) -> str:
    """Base64 content as its type and size: 4 characters hold 3 bytes."""
    return f"{item.get('mimeType', 'unknown type')}, {len(str(item.get(key, '')).rstrip('=')) * 3 // 4} bytes"
