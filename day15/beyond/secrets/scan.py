"""Beyond the tutorial: secrets found by their place in any text, at any length: the value after a secret-named
key or flag (--token V, KEY=V, ?key=V, "api_key": "V", a header line's), after an auth scheme (Bearer V), and a
URL's password. Only a value shaped like a credential (no space, quote, bracket or shell character) is one: a
command or a sentence after `--token` is shown, never hidden. A name too common to be sure of alone (key, token,
session...) counts in a URL's query and as a flag only, so code (`sorted(x, key=len)`) and JSON ("key": "PROJ-1")
read as they are.

A name is found by the keyword it must hold, the name grown round it, so a long text costs a few scans with
str.find and work only where a keyword is, never a regular expression tried at every letter; each value is read
once (a keyword inside a value found already is passed over).
"""
import base64
import binascii
import re

from beyond.secrets.names import PLACEHOLDERS, is_secret_name

# What every secret name holds, a word of it ending there, or going on as ENDS_WITH says (is_secret_name
# decides); those that must be a word of their own unless they go on; the ones too common to be sure of alone.
KEYWORDS = ("key", "token", "secret", "pass", "pwd", "credential", "cookie", "session", "auth", "sig", "pat")
ENDS_WITH = {"secret": "s?", "credential": "s?", "pass": "(?:word|wd|phrase)?", "auth": "(?:orization)?"}
WHOLE = ("pass", "pwd", "auth", "sig", "pat")
# Each keyword where a word ends with it (in the text lower-cased: a literal first, so it runs as fast as a
# find): "path", "keyboard" and "tokens" are passed over in C.
WORD_ENDS = [(word, re.compile(word + ENDS_WITH.get(word, "") + "(?![a-z0-9])")) for word in KEYWORDS]
GENERIC = {"KEY", "TOKEN", "SESSION", "AUTH", "SIG", "COOKIE", "PAT", "PASS", "PWD"}
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
NAME_REST = re.compile(r"[A-Za-z0-9_.-]{0,64}")
# A name is grown this far round its keyword at most: a longer run of letters is no name.
MAX_NAME = 64
ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
# A credential's shape, at most this long (a JWT is a few KB): no white space, quote, bracket or what a shell
# acts on (a $ only inside: ${VAR} and $(cmd) are no value; a comma not first). Quoted, all it holds must be so.
MAX_VALUE = 8192
TOKEN = r"[^\s\"'`$;&|<>(){}\[\]\\,][^\s\"'`;&|<>(){}\[\]\\]{0,%d}" % MAX_VALUE
# After a flag: =V, spaces and V, or the next item of a list ("--token", "V"); after a name: =V, or " = " and
# a quoted V (code); a quoted name's ": " and a quoted V (JSON); a header line's ": " and V to the line's end.
FLAG_VALUE = re.compile(r"=(?P<a>" + TOKEN + r")|[ \t]+(?P<b>(?!-)" + TOKEN + r")|"
                        r"\\?[\"'][ \t]*,[ \t]*\\?[\"'](?P<c>(?!-)" + TOKEN + r")\\?[\"']")
EQUALS_VALUE = re.compile(r"=(?P<a>" + TOKEN + r")|[ \t]*=[ \t]*(?P<q>\\?[\"'])(?P<b>" + TOKEN + r")(?P=q)")
# A query's value, up to the next & or #; not a ${VAR} or a mask made already.
QUERY_VALUE = re.compile(r"=(?P<a>(?!\$[{(]|\[masked\]|\[REDACTED)[^\s\"'<>&#]{1,%d})" % MAX_VALUE)
QUOTED_VALUE = re.compile(r"\\?[\"'][ \t]*:[ \t]*\\?[\"'](?P<a>" + TOKEN + r")\\?[\"']")
LINE_VALUE = re.compile(r":[ \t]+(?:(?:Bearer|Basic|Token|DPoP)[ \t]+)?(?P<a>" + TOKEN + r")[ \t]*(?:\r?\n|$)",
                        re.IGNORECASE)
# The credential after an auth scheme (RFC 7235's token68), 8 characters at least (the Bearer of a letter is
# no token); Basic's only when it decodes to user:password.
SCHEMES = ("Bearer", "DPoP", "Basic")
TOKEN68 = re.compile(r"[ \t]+([A-Za-z0-9\-._~+/]{8,%d}=*)" % MAX_VALUE)
# A password in a URL (scheme://user:password@host; an @ in it as urlsplit reads it, up to the last), but one
# masked already or a ${VAR}. (Bounded repeats: linear time; no quote, so a URL in JSON stays JSON.)
URL_PASSWORD = re.compile(r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^/\s:@\"'<>]{0,256}:)"
                          r"(?!\[masked\]@|\[REDACTED[^@]{0,64}@|\$\{[^@]{0,64}@)"
                          r"(?:[^/\s@\"'<>]|@(?=[^/\s\"'<>]{0,1024}@)){1,1024}@")
# Values that are no secret wherever they stand: a switch's word, a placeholder, what documentation writes.
NOT_VALUES = {"true", "false", "yes", "no", "on", "off", "required", "optional", "string", "integer", "number",
              "boolean", "object", "array"} | PLACEHOLDERS
MASK = "[REDACTED]"


def by_place(text: str) -> str:
    """`text` with every secret by place replaced by [REDACTED]."""
    found = spans(text)
    if found:
        out, at = [], 0
        for start, end, _ in found:
            out += [text[at:start], MASK]
            at = end
        text = "".join(out) + text[at:]
    return URL_PASSWORD.sub(r"\1" + MASK + "@", text) if "://" in text and "@" in text else text


def spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name as written: --token, api_key, Bearer) of each secret by place but a URL's password, in
    order, none overlapping."""
    found, at = [], 0
    for start, end, name in sorted(_key_spans(text) + _scheme_spans(text)):
        if start >= at:
            found.append((start, end, name))
            at = end
    return found


def triggered(line: str) -> bool:
    """Whether a line may hold a secret by place, now or once more of it comes: a URL, a scheme word, a cookie
    header, a name that is secret where it stands, or one that may still grow into one at the line's end."""
    lower = _lower(line)
    if "://" in lower or any(scheme.lower() in lower for scheme in SCHEMES) or \
            lower.lstrip().startswith(("cookie:", "set-cookie:")):
        return True
    for _, ends in WORD_ENDS:
        for hit in ends.finditer(lower):
            start, end = _name_round(line, hit.start(), 0)
            bare = line[start:end].lstrip("-")
            context = line[start] == "-" or start and line[start - 1] in "?&;#" or "cookie:" in lower \
                and _cookie_line(line, start)
            if end == len(line) or is_secret_name(bare) and (bare.upper() not in GENERIC or context):
                return True
    return False


def _key_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each value after a secret-named name: found by its keyword, the name grown round it."""
    lower, found = _lower(text), []
    cookies = "cookie:" in lower  # a Cookie header's pairs are a query's (looked for only where one is)
    for word, ends in WORD_ENDS:
        passed = 0
        for hit in ends.finditer(lower):
            at = hit.start()
            if at < passed or word in WHOLE and hit.end() - at == len(word) and at and not text[at].isupper() \
                    and (text[at - 1].islower() or text[at - 1].isdigit()):  # oauth, design: in another word
                continue
            start, end = _name_round(text, at, passed)
            value = _value_after(text, start, end, cookies)
            found += [(*value, text[start:end])] if value else []
            passed = value[1] if value else end  # what a value holds is no name
    return found


def _lower(text: str) -> str:
    """`text` lower-cased, each character where it was (U+0130's lower case is two: then the ASCII letters alone)."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.translate(ASCII_LOWER)


def _name_round(text: str, at: int, passed: int) -> tuple[int, int]:
    """(start, end) of the name round the keyword at `at`, not reaching back before `passed`."""
    start = at
    while start > passed and at - start < MAX_NAME and text[start - 1] in NAME_CHARS:
        start -= 1
    return start, NAME_REST.match(text, at).end()


def _value_after(text: str, start: int, end: int, cookies: bool) -> tuple[int, int] | None:
    """The span of the value that follows the name text[start:end], when the name is secret where it stands
    and a credential-shaped value follows."""
    name = text[start:end]
    bare = name.lstrip("-")
    if not is_secret_name(bare):
        return None
    generic = bare.upper() in GENERIC
    before = text[start - 1] if start else "\n"
    if name.startswith("-"):  # a flag, generic or not
        found = FLAG_VALUE.match(text, end)
    elif before in "?&;#" or generic and cookies and _cookie_line(text, start):  # a query, a Cookie header
        found = QUERY_VALUE.match(text, end)
    elif generic:
        found = None
    elif before in "\"'":
        found = QUOTED_VALUE.match(text, end)
    else:
        found = EQUALS_VALUE.match(text, end)
        if not found and _line_start(text, start):  # a header's or YAML's line: "X-Api-Key: V"
            found = LINE_VALUE.match(text, end)
    if not found:
        return None
    group = next(g for g in ("a", "b", "c") if g in found.re.groupindex and found.group(g) is not None)
    if found.group(group).lower() in NOT_VALUES or text[found.end(group):found.end(group) + 1] in ("'", '"') \
            and group == "a" and found.re is EQUALS_VALUE:  # f'{user}': a string's prefix, no value
        return None
    return found.span(group)


def _line_start(text: str, start: int) -> bool:
    """Whether the name at `start` begins its line (after a little indentation, a list's dash, a quote)."""
    head = text[max(0, start - 16):start]
    return ("\n" in head or start <= 16) and not head[head.rfind("\n") + 1:].strip(" \t-\"'")


def _cookie_line(text: str, start: int) -> bool:
    """Whether the name at `start` is in a Cookie or Set-Cookie header's line (within its first KB)."""
    begins = text.rfind("\n", max(0, start - 1024), start) + 1
    if not begins and start > 1024:
        return False
    return text[begins:start].lstrip().lower().startswith(("cookie:", "set-cookie:"))


def _scheme_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, scheme) of each credential after Bearer, DPoP or Basic (a word of its own, a space after)."""
    found = []
    for scheme in SCHEMES:
        at = text.find(scheme)
        while at != -1:
            credential = None if at and text[at - 1].isalnum() else TOKEN68.match(text, at + len(scheme))
            if credential and (scheme != "Basic" or _user_password(credential.group(1))):
                found.append((*credential.span(1), scheme))
            at = text.find(scheme, credential.end() if credential else at + 1)
    return found


def _user_password(credential: str) -> bool:
    try:
        return b":" in base64.b64decode(credential, validate=True)
    except (binascii.Error, ValueError):
        return False
