"""Beyond the tutorial: a SKILL.md's front matter, as parsed (frontmatter.py), compared with what its server
declared of it (the JSON object of its entry), field by field, as SEP-2640 asks. The server read the YAML with a
loader of its own: an unquoted value may mean a boolean, a number, null or a date to it, so each reading counts.
"""
import re
from functools import reduce

# What a plain scalar may also mean to a YAML 1.1 loader (PyYAML's safe_load) or a YAML 1.2 core-schema one
# (js-yaml, whose dates JSON writes as ISO timestamps): their resolvers' patterns, joined.
_NULLS, _TRUE = ("", "~", "null", "Null", "NULL"), ("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON")
_FALSE = ("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF")
_INT = re.compile(r"[-+]?(?:0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*|[1-9][0-9_]*(?::[0-5]?[0-9])+)")
_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
                    r"|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class Plain(str):
    """An unquoted scalar, as written: a YAML loader may read it as a boolean, a number, null or a date."""


class Block(str):
    """A block scalar (| or >); `bare` is it without its last line break when it ends the front matter (what a
    server that cut the block before the closing line's break read)."""


def differences(parsed: dict, declared: dict) -> list[str]:
    """The fields (sorted; nested ones as metadata.version) whose values differ between the front matter the
    client parsed and the JSON object the server declared; [] when they agree. A field on one side only differs
    (`key:` with no value equals a declared null or "", not an absent key); an unquoted value equals its text or
    what a YAML 1.1 or 1.2 loader reads it as (yes, 0x10, 1.10, ~, a date); a quoted one is a string."""
    return sorted(_differ(parsed, declared if isinstance(declared, dict) else {}, ""))


def _differ(mine, theirs, path: str) -> list[str]:
    if isinstance(mine, dict) and isinstance(theirs, dict):
        found = []
        for key in mine.keys() | theirs.keys():
            where = f"{path}.{key}" if path else str(key)
            found += _differ(mine[key], theirs[key], where) if key in mine and key in theirs else [where]
        return found
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        return [path] if any(_differ(a, b, path) for a, b in zip(mine, theirs)) else []
    if isinstance(mine, Plain):
        return [] if any(_equal(reading, theirs) for reading in readings(mine)) else [path]
    same = isinstance(mine, str) and isinstance(theirs, str) and theirs in (mine, getattr(mine, "bare", mine))
    return [] if same else [path]


def _equal(reading, theirs) -> bool:
    """A plain scalar's reading and a declared JSON value are the same (1 and 1.0 are; true and 1 are not)."""
    if reading is None or isinstance(reading, bool) or isinstance(theirs, bool):
        return reading is theirs
    if isinstance(reading, (int, float)):
        return isinstance(theirs, (int, float)) and (reading == theirs or reading != reading and theirs != theirs)
    return isinstance(theirs, str) and reading == theirs


def readings(text: str) -> list:
    """What a plain scalar may be read as: its text, and what YAML 1.1 or 1.2 resolves it to."""
    found = [str(text)] + [None] * (text in _NULLS) + [text in _TRUE] * (text in _TRUE + _FALSE)
    digits, sign = text.replace("_", "").lstrip("+-").lower(), -1 if text[:1] == "-" else 1
    try:
        if _INT.fullmatch(text) and ":" not in digits:
            found.append(sign * int(digits, 0 if digits[1:2] in ("b", "o", "x") else 10))
            found += [sign * int(digits, 8)] * (digits[:1] == "0" and set(digits) <= set("01234567"))
        if _FLOAT.fullmatch(text) or _INT.fullmatch(text):  # YAML 1.1 reads 1:30 in base 60: 90
            parts = digits.replace(".inf", "inf").replace(".nan", "nan").split(":")
            found.append(sign * reduce(lambda value, part: value * 60 + float(part), parts, 0.0))
            found += [None] * ("inf" in digits or "nan" in digits)  # JSON.stringify writes them as null
    except ValueError:
        pass  # what the loaders fail to convert (0x_) is read as its text
    return found + [f"{text}T00:00:00.000Z"] * bool(_DATE.fullmatch(text))
