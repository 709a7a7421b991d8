"""What JavaScript does that Python does not, where mcp.ts relies on it: one function per expression.

The twin (mcp.py) reads as mcp.ts does and calls these where Python's defaults would answer otherwise:
`line.trim()`, `if (value)`, `value ?? fallback`, `value.key`, `for...of`, `JSON.parse`, `Object.entries`,
`String(value)`.
"""
import json

# trim() removes these (str.strip() also removes U+001C-U+001F and U+0085, and keeps U+FEFF).
SPACE = "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(map(chr, range(0x2000, 0x200b)))
# JSON.parse takes any integer; Python refuses to parse ones past 4,300 digits, so longer ones become floats.
LONG_INT_DIGITS = 4000


def trim(text: str) -> str:
    return text.strip(SPACE)


def truthy(value: object) -> bool:
    """`if (value)`: {} and [] are true; 0, "", null, false and NaN are false."""
    return value is not None and value is not False and value != 0 and value != "" and value == value


def nullish(value: object, fallback: object) -> object:
    """`value ?? fallback`: only a missing value (None) takes the fallback."""
    return fallback if value is None else value


def member(value: object, key: str, undefined: object = None) -> object:
    """`value.key`: a TypeError for null, as JavaScript throws; an object's property; else `undefined`."""
    if value is None:
        raise TypeError(f"Cannot read properties of null (reading '{key}')")
    return value.get(key, undefined) if isinstance(value, dict) else undefined


def iterable(value: object) -> list:
    """What `for...of` walks: an array's items, a string's characters; a TypeError for anything else."""
    if isinstance(value, (list, str)):
        return list(value)
    raise TypeError(f"{json.dumps(value)} is not iterable")


def parse(text: str) -> object:
    """JSON.parse: NaN and Infinity refused, any integer taken. ValueError (or RecursionError) where it throws,
    or where Python cannot follow (deep nesting)."""
    return json.loads(text, parse_constant=int, parse_int=lambda s: int(s) if len(s) < LONG_INT_DIGITS else float(s))


def entries(value: object) -> list[tuple[str, object]]:
    """Object.entries(value): an object's entries, a list's or a string's items by index, none of a number."""
    if isinstance(value, dict):
        return [(str(key), item) for key, item in value.items()]
    return [(str(i), item) for i, item in enumerate(value)] if isinstance(value, (list, str)) else []


def spawn_args(args: object, env: object) -> tuple[list[str], dict[str, str]]:
    """What Node's spawn makes of args and env: a TypeError for args that are not an array, each value as String()."""
    if not isinstance(args, list):
        raise TypeError(f'The "args" argument must be a list, not {type(args).__name__}')
    return [string(arg) for arg in args], {str(key): string(value) for key, value in dict(env).items()}


def string(value: object) -> str:
    """String(value), as Node writes args and env: 1.0 is "1", true "true", null "null", an object JSON-like."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if item is None else string(item) for item in value)
    return "[object Object]" if isinstance(value, dict) else str(value)
