"""Beyond the tutorial: a skill's SKILL.md front matter (MCP Skills extension, SEP-2640), read and compared.

A server declares each skill's front matter as a JSON object; having read the SKILL.md, the client must parse its
YAML front matter and compare the two field by field (frontmatter_values.py compares). The standard library has
no YAML: this reads the subset
skill authors write (block maps and lists, one-line flow lists and maps, plain, quoted and block scalars) and
refuses the rest (anchors, aliases, tags, complex keys, directives, multi-line quoted or flow values, tabs).
"""
import re
from types import MappingProxyType

from beyond.client.frontmatter_values import Block, Plain, readings

# A real front matter is a name, a description and a few fields, under 2 KiB; 64 KiB is far above any of them
# and bounds what a server's file makes the client parse.
MAX_FRONT_MATTER_BYTES = 64 * 1024
# Agent Skills nest two deep (metadata: {key: value}); 8 leaves room and keeps recursion far from Python's limit.
MAX_DEPTH = 8
# The refusal of YAML beyond the subset, so that an author knows what to rewrite.
UNREAD = "uses YAML this agent does not read (anchors, aliases, tags, complex keys, directives)"
# The opening line (after an optional byte order mark) and the closing one (--- or ...), trailing spaces allowed.
_OPEN, _CLOSE = re.compile(r"\ufeff?---[ \t]*\r?\n"), re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$\n?", re.M)
# Characters YAML forbids, and line breaks a YAML 1.1 loader breaks at and this reader would not (a lone CR,
# NEL, LS, PS): refused rather than read differently.
_REFUSED_CHARS = re.compile("[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# One-line quoted scalars, a double-quoted one's escapes (YAML's list), a block scalar's header (| |- |+ > >- >+).
_SINGLE, _DOUBLE = re.compile(r"'((?:[^']|'')*)'"), re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_ESCAPES = MappingProxyType(dict(zip("0abt\tnvfre \"/\\N_LP", "\0\a\b\t\t\n\v\f\r\x1b \"/\\\x85\xa0\u2028\u2029")))
_HEADER, _SPACES = re.compile(r"([|>])([-+]?)(?: +#.*)? *"), re.compile(" *")
def split(text: str) -> tuple[dict, str]:
    """(the front matter of a SKILL.md, parsed; the text after it). A ValueError says which line is not read."""
    opening = _OPEN.match(text)
    if not opening:
        raise ValueError("SKILL.md does not start with front matter: its first line must be ---")
    closing = _CLOSE.search(text, opening.end())
    if not closing:
        raise ValueError("the front matter is not closed: no line --- after the first")
    block = text[opening.end():closing.start()].replace("\r\n", "\n")
    if len(block) > MAX_FRONT_MATTER_BYTES or len(block.encode()) > MAX_FRONT_MATTER_BYTES:
        raise ValueError(f"the front matter is larger than {MAX_FRONT_MATTER_BYTES} bytes")
    if bad := _REFUSED_CHARS.search(block):
        raise _error(block.count("\n", 0, bad.start()), f"the character U+{ord(bad[0]):04X} is not allowed")
    reader = _Reader(block.split("\n")[:-1])
    if (at := reader.next_line()) is None or not reader.key_of(at):
        raise _error(at or 0, "the front matter must be `key: value` lines")
    found = reader.mapping(_indent(reader.lines[at], at), 1)
    if (at := reader.next_line()) is not None:
        raise _error(at, "is indented less than the keys above it")
    return found, text[closing.end():]


def _error(at: int, what: str) -> ValueError:
    return ValueError(f"front matter line {at + 2}: {what}")


def _indent(line: str, at: int) -> int:
    """The spaces before a line's text; a tab there is an error (YAML indents with spaces only)."""
    if "\t" in line[:len(line) - len(line.lstrip(" \t"))]:
        raise _error(at, "a tab in the indentation: indent with spaces")
    return len(line) - len(line.lstrip(" "))


def _key(key: str, found: dict, at: int) -> str:
    """A new key of `found`, read as text by every loader (`on`, `1`, `~`, `<<` are not: they must be quoted)."""
    if not isinstance(key, str):
        raise _error(at, UNREAD)  # a list or map as a key
    if isinstance(key, Plain) and (len(readings(key)) > 1 or key == "<<"):
        raise _error(at, f"the key {key!r} is not read as text by every YAML loader: put it in quotes")
    if key in found:
        raise _error(at, f"the key {key!r} is written twice")
    return key


class _Reader:
    """The lines of one front matter block and the next one to read; a node is read from its first line on."""

    def __init__(self, lines: list[str]):
        self.lines, self.at = lines, 0

    def next_line(self) -> int | None:
        """The next line that is neither blank nor a comment (reading moves to it); None at the end."""
        while self.at < len(self.lines) and self.lines[self.at].strip(" ")[:1] in ("", "#"):
            _indent(self.lines[self.at], self.at)
            self.at += 1
        return self.at if self.at < len(self.lines) else None

    def key_of(self, at: int) -> tuple[str, str] | None:
        """(key, the text after its colon) when line `at` is `key: ...`, else None."""
        text = self.lines[at].lstrip(" ")
        if text[:1] == "%" or text[:2] in ("?", "? "):
            raise _error(at, UNREAD)  # a directive, a complex key (anchors and tags: as the key is read)
        quoted = text[:1] in ("'", '"')
        key, end = _quoted(text, 0, at) if quoted else (None, _plain_end(text, 0, "", at))
        rest = text[_SPACES.match(text, end).end() if quoted else end:]
        if rest[:1] != ":" or rest[1:2] not in ("", " ") or text[:1] in ("[", "{"):
            return None
        return (key if quoted else _plain(text, 0, "", at)[0]), rest[1:].strip(" ")

    def node(self, parent: int, depth: int):
        """The node that starts on the next line, indented more than `parent`: a list, a map or a scalar."""
        at = self.next_line()
        if depth > MAX_DEPTH:
            raise _error(at, f"nested deeper than {MAX_DEPTH} levels")
        col = _indent(self.lines[at], at)
        if _is_item(self.lines[at][col:]):
            return self.sequence(col, depth)
        if self.key_of(at):
            return self.mapping(col, depth)
        self.at = at + 1
        return self.value(self.lines[at][col:], at, parent, depth)

    def mapping(self, col: int, depth: int) -> dict:
        found = {}
        while (at := self.next_line()) is not None and (indent := _indent(self.lines[at], at)) >= col:
            if indent > col or not (entry := self.key_of(at)):
                raise _error(at, "is indented more than the keys above it" if indent > col else "expected key: value")
            self.at = at + 1
            found[_key(entry[0], found, at)] = self.after(entry[1], at, col, depth, True)
        return found

    def sequence(self, col: int, depth: int) -> list:
        found = []
        while (at := self.next_line()) is not None and _indent(self.lines[at], at) == col \
                and _is_item(self.lines[at][col:]):
            self.lines[at] = " " * (col + 1) + self.lines[at][col + 1:]  # the item's text, a node of its own
            if (text := self.lines[at].strip(" "))[:1] == "-" and text[1:].strip(" ")[:1] in ("", "#"):
                raise _error(at, "an empty item after `- -`, which YAML loaders read differently: write - - ''")
            self.at = at + 1 if self.lines[at].strip(" ")[:1] in ("", "#") else at
            found.append(self.after("", at, col, depth, False) if self.at > at else self.node(col, depth + 1))
        return found

    def after(self, rest: str, at: int, col: int, depth: int, in_map: bool):
        """The value after `key:` or `-`: on its line, on the more indented lines below, or a map's list at `col`."""
        if rest[:1] not in ("", "#"):
            return self.value(rest, at, col, depth + 1)
        below = self.lines[self.next_line()] if self.next_line() is not None else ""
        indent = len(below) - len(below.lstrip(" "))
        if below and (indent > col or in_map and indent == col and _is_item(below[indent:])):
            return self.node(col, depth + 1)
        return Plain("")

    def value(self, text: str, at: int, parent: int, depth: int):
        """The scalar or flow value that starts `text` on line `at` (read), with the lines that continue it."""
        if text[0] in "|>":
            return self.block(text, at, parent)
        found, end = _inline(text, 0, "", at, depth)
        found = self.continued(found, parent) if isinstance(found, Plain) and end == len(text) else found
        if (rest := text[end:].lstrip(" "))[:1] not in ("", "#"):
            raise _error(at, "an unquoted value with `: ` in it: put it in quotes" if rest[0] == ":"
                         else f"unexpected text after a value: {rest[:20]!r}")
        return found

    def continued(self, text: str, parent: int) -> Plain:
        """A plain scalar's more indented lines, folded: a line break is a space, n blank lines n breaks."""
        parts, blanks = [text], 0
        while self.at < len(self.lines):
            line = self.lines[self.at].strip(" ")
            if line and (_indent(self.lines[self.at], self.at) <= parent or line[0] == "#"):
                break
            end = _plain_end(line, 0, "", self.at)
            if line[end:end + 1] == ":":
                raise _error(self.at, "an unquoted value with `: ` in it: put it in quotes")
            parts += ["\n" * blanks or " ", line[:end].rstrip(" ")] if line else []
            blanks = 0 if line else blanks + 1
            self.at += 1
            if end < len(line):
                break  # a comment ends it
        return Plain("".join(parts))

    def block(self, header: str, at: int, parent: int) -> Block:
        """A literal (|) or folded (>) block scalar: its header on line `at`, then its more indented lines."""
        if not (match := _HEADER.fullmatch(header)):
            raise _error(at, f"a block scalar header {header!r} this agent does not read: | |- |+ > >- >+ only")
        indent, lines, fixed = parent + 1, [], False  # the first line with text sets it
        while self.at < len(self.lines):
            line = self.lines[self.at]
            spaces = len(line) - len(line.lstrip(" "))
            indent, fixed = (indent, True) if fixed else (max(indent, spaces), bool(line.strip(" ")))
            if line.strip(" ") and spaces < indent:
                break
            lines.append(line[indent:])
            self.at += 1
        value = Block(_block_text(lines, match[1] == ">", match[2]))
        value.bare = value[:-1] if self.at == len(self.lines) and value.endswith("\n") else str(value)
        return value


def _is_item(text: str) -> bool:
    return text == "-" or text[:2] == "- "


def _block_text(lines: list[str], folded: bool, chomp: str) -> str:
    """A block scalar's value from its lines (indentation removed): literal or folded, then chomped."""
    end = len(lines)
    while end and not lines[end - 1]:
        end -= 1
    parts, breaks, previous = [], 0, ""
    for line in lines[:end]:
        if line:
            fold = folded and previous[:1] not in ("", " ", "\t") and line[0] not in " \t"
            parts += ["\n" * breaks or " " if fold else "\n" * (breaks + bool(previous)), line]
            previous, breaks = line, 0
        else:
            breaks += 1
    if not previous:
        return "\n" * len(lines) if chomp == "+" else ""
    return "".join(parts) + ("" if chomp == "-" else "\n" * (1 + (len(lines) - end) * (chomp == "+")))


def _quoted(text: str, i: int, at: int) -> tuple[str, int]:
    """The single- or double-quoted scalar at text[i] and where it ends; it must end on its line."""
    match = (_SINGLE if text[i] == "'" else _DOUBLE).match(text, i)
    if not match:
        raise _error(at, "a quoted value must end on the same line")
    if text[i] == "'":
        return match[1].replace("''", "'"), match.end()
    return _ESCAPE.sub(lambda escape: _unescape(escape[1], at), match[1]), match.end()


def _unescape(code: str, at: int) -> str:
    point = int(code[1:], 16) if len(code) > 1 else -1
    if point > 0x10FFFF or point < 0 and code not in _ESCAPES:
        raise _error(at, f"unknown escape \\{code} in a double-quoted value")
    return chr(point) if point >= 0 else _ESCAPES[code]


def _plain(text: str, i: int, stops: str, at: int) -> tuple[Plain, int]:
    """The plain scalar at text[i] and where it ends; anchors, tags and indicators cannot start one."""
    first, following = text[i:i + 1], text[i + 1:i + 2]
    if first in ("&", "*", "!", "%") or first == "?" and following in " " + stops:
        raise _error(at, UNREAD)
    if first in "-?:" and following in " " + stops or first in ",[]{}#|>'\"@`":
        raise _error(at, f"cannot read the value {text[i:i + 20]!r}: put it in quotes")
    end = _plain_end(text, i, stops, at)
    return Plain(text[i:end].rstrip(" ")), end


def _plain_end(text: str, i: int, stops: str, at: int) -> int:
    """Where the plain scalar at text[i] ends: at `: `, ` #` or the line's end; in a flow also at `stops`."""
    for j in range(i, len(text)):
        ch = text[j]
        if ch in stops or ch == ":" and text[j + 1:j + 2] in " " + stops or ch == "#" and text[j - 1:j] == " ":
            return j
        if ch == "\t":
            raise _error(at, "a tab outside quotes: use spaces")
    return len(text)


def _flow(text: str, i: int, at: int, depth: int) -> tuple[list | dict, int]:
    """The flow list or map at text[i] ([a, "b", 3], {a: 1}), on one line, and where it ends."""
    if depth > MAX_DEPTH:
        raise _error(at, f"nested deeper than {MAX_DEPTH} levels")
    close, found = ("]", []) if text[i] == "[" else ("}", {})
    i = _SPACES.match(text, i + 1).end()
    while text[i:i + 1] != close:
        if i == len(text):
            raise _error(at, f"no {close} on the line: a list or map in brackets must end on its line")
        item, i = _inline(text, i, ",[]{}?", at, depth + 1)
        i = _SPACES.match(text, i).end()
        if close == "]":
            found.append(item)
        elif text[i:i + 1] != ":":
            raise _error(at, f"expected key: value in {{ }}, at {text[i:i + 20]!r}")
        else:
            key = _key(item, found, at)
            found[key], i = _inline(text, _SPACES.match(text, i + 1).end(), ",[]{}?", at, depth + 1)
            i = _SPACES.match(text, i).end()
        if text[i:i + 1] not in (",", close, ""):
            raise _error(at, f"expected , or {close} at {text[i:i + 20]!r}")
        i = _SPACES.match(text, i + 1).end() if text[i:i + 1] == "," else i
    return found, i + 1


def _inline(text: str, i: int, stops: str, at: int, depth: int):
    """The flow, quoted or plain value at text[i] and where it ends; a plain one also ends at `stops`."""
    if text[i:i + 1] in ("[", "{"):
        return _flow(text, i, at, depth)
    return _quoted(text, i, at) if text[i:i + 1] in ("'", '"') else _plain(text, i, stops, at)
