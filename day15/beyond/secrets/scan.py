"""Beyond the tutorial: secrets found by their place in any text, at any length: the value after a secret-named
key or flag (KEY=V, ?key=V, "key": "V", --token V), after an auth scheme (Bearer V), and a URL's password.

A name is found by the keyword it must hold (names.py decides whether it is secret), the name grown round
it, so a long text costs a few scans of it with str.find, not a regular expression tried at every letter.
"""
import base64
import binascii
import re

from beyond.secrets.names import PLACEHOLDERS, is_secret_name

# What makes a name worth a look (is_secret_name decides): every secret name holds one of these.
KEYWORDS = ("key", "token", "secret", "passw", "passphrase", "credential", "cookie", "session", "auth", "sig")
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
NAME_REST = re.compile(r"[A-Za-z0-9_.-]{0,64}")
# A name is grown this far round its keyword at most: a longer run of letters is no name.
MAX_NAME = 64
ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
# The value after KEY= (a query's ends at & or ;), after a flag and spaces, and a quoted one ("KEY": "V"),
# in JSON written as it is or inside another JSON string (\"KEY\": \"V\").
EQUALS_VALUE = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'|([^\s&;,\"'<>]+)")
FLAG_VALUE = re.compile(r"[ \t]+(?:\"([^\"\n]*)\"|'([^'\n]*)'|([^\s\"'-][^\s\"']*))")
QUOTED_VALUE = {(q, False): re.compile(q + r"\s*:\s*" + q + r"((?:[^" + q + r"\\\n]|\\.)*)" + q) for q in "\"'"}
QUOTED_VALUE |= {(q, True): re.compile(r"\\" + q + r"\s*:\s*\\" + q + r"((?:(?!\\" + q + r").)*)\\" + q)
                 for q in "\"'"}
# The credential after an auth scheme (RFC 7235's token68); Basic's only when it decodes to user:password.
SCHEMES = ("Bearer", "DPoP", "Basic")
TOKEN68 = re.compile(r"[ \t]+([A-Za-z0-9\-._~+/]+=*)")
# A password in a URL (scheme://user:password@host), but one masked already. (Bounded repeats, so a long
# run of letters costs linear time, not quadratic; no quote, so a URL inside JSON leaves it JSON.)
URL_PASSWORD = re.compile(r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^/\s:@\"'<>]{0,256}:)"
                          r"(?!\[masked\]@|\[REDACTED[^@]{0,64}@)[^/\s@\"'<>]{1,1024}@")
# Values that are no secret wherever they stand: a switch's word, a placeholder (and below: a reference,
# ${VAR} or $(cmd), and a mask already made).
NOT_VALUES = {"true", "false", "yes", "no", "on", "off"} | PLACEHOLDERS
MASK = "[REDACTED]"


def by_place(text: str) -> str:
    """`text` with every secret by place replaced by [REDACTED]."""
    spans = _key_spans(text) + _scheme_spans(text)
    if spans:
        out, at = [], 0
        for start, end in sorted(spans):
            if start >= at:
                out += [text[at:start], MASK]
                at = end
        text = "".join(out) + text[at:]
    return URL_PASSWORD.sub(r"\1" + MASK + "@", text) if "://" in text and "@" in text else text


def triggered(line: str) -> bool:
    """Whether a line may hold a secret by place, now or once more of it comes."""
    line = line.lower()
    return any(word in line for word in KEYWORDS) or "://" in line or any(s.lower() in line for s in SCHEMES)


def _key_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each value after a secret-named name: found by its keyword, the name grown round it."""
    lower, spans, seen = text.lower(), [], set()
    if len(lower) != len(text):  # a letter whose lower case is longer (U+0130): the ASCII letters alone
        lower = text.translate(ASCII_LOWER)
    for word in KEYWORDS:
        at = lower.find(word)
        while at != -1:
            start = at
            while start > 0 and at - start < MAX_NAME and text[start - 1] in NAME_CHARS:
                start -= 1
            end = NAME_REST.match(text, at).end()
            if start not in seen:
                seen.add(start)
                spans += _value_after(text, start, end)
            at = lower.find(word, max(end, at + 1))
    return spans


def _value_after(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The span of the value that follows the name text[start:end], when the name is secret and one follows."""
    name = text[start:end]
    if not is_secret_name(name.lstrip("-")):
        return []
    quote = text[start - 1] if start else ""
    if text[end:end + 1] == "=":
        found = EQUALS_VALUE.match(text, end + 1)
    elif quote in ("\"", "'"):
        found = QUOTED_VALUE[quote, start > 1 and text[start - 2] == "\\"].match(text, end)
    elif name.startswith("-"):
        found = FLAG_VALUE.match(text, end)
    else:
        return []
    if not found:
        return []
    group = next(g for g in range(1, found.re.groups + 1) if found.group(g) is not None)
    value = found.group(group)
    no_value = not value or value.startswith(("${", "$(", "[REDACTED", "[masked]")) or value.lower() in NOT_VALUES
    return [] if no_value else [found.span(group)]


def _scheme_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each credential after Bearer, DPoP or Basic (a word of its own, a space after)."""
    spans = []
    for scheme in SCHEMES:
        at = text.find(scheme)
        while at != -1:
            found = None if at and text[at - 1].isalnum() else TOKEN68.match(text, at + len(scheme))
            if found and (scheme != "Basic" or _user_password(found.group(1))):
                spans.append(found.span(1))
            at = text.find(scheme, at + 1)
    return spans


def _user_password(credential: str) -> bool:
    try:
        return b":" in base64.b64decode(credential, validate=True)
    except (binascii.Error, ValueError):
        return False
