"""Beyond the tutorial: a tool's schemas: its structuredContent checked against its outputSchema, and
the arguments its inputSchema asks to see in headers (x-mcp-header).

The specification says clients should validate structured results. This checks what tools use:
type (one or a list; integer is a number without a fraction, never a boolean), enum, const,
properties, required, additionalProperties, items, allOf, anyOf, oneOf, and $ref within the schema
itself ("#/$defs/x", "#/definitions/x", "#"). Other keywords are ignored, nothing is fetched, and
a schema that would take more than MAX_STEPS checks (or nest deeper than MAX_DEPTH) stops being
checked there: a server's schema cannot make the client work without end.
"""
import json
import re

from beyond.text import fit, shorten

# A schema is checked at most this many steps and this deep; past that what was checked stands.
MAX_STEPS = 100_000
MAX_DEPTH = 64

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


class _Budget(Exception):
    """The schema took more checks than MAX_STEPS: what was checked so far stands."""


def mismatch(instance: object, schema: object) -> str | None:
    """The first way `instance` does not match `schema` ("at $.items[2]: expected integer, got string"), or None."""
    steps = [0]
    try:
        return _check(instance, schema, schema, "$", steps, 0)
    except (_Budget, RecursionError):
        return None


def _check(value: object, schema: object, root: object, at: str, steps: list[int], depth: int) -> str | None:
    steps[0] += 1
    if steps[0] > MAX_STEPS or depth > MAX_DEPTH:
        raise _Budget
    if schema is False:
        return f"at {at}: nothing is allowed here"
    if not isinstance(schema, dict):
        return None  # true, or not a schema: anything goes
    return (_check_ref(value, schema, root, at, steps, depth) or _check_here(value, schema, at)
            or _check_parts(value, schema, root, at, steps, depth)
            or (_check_object(value, schema, root, at, steps, depth) if isinstance(value, dict)
                else _check_items(value, schema, root, at, steps, depth)))


def _check_ref(value: object, schema: dict, root: object, at: str, steps: list[int], depth: int) -> str | None:
    """$ref: the schema it points to (within the root), when it can be found."""
    target = _resolve(root, schema["$ref"]) if isinstance(schema.get("$ref"), str) else None
    return None if target is None else _check(value, target, root, at, steps, depth + 1)


def _check_here(value: object, schema: dict, at: str) -> str | None:
    """type, enum and const: what the value itself must be."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else None
    if kinds is not None and not any(_is(value, kind) for kind in kinds):
        return f"at {at}: expected {' or '.join(map(str, kinds))}, got {_kind(value)}"
    if isinstance(schema.get("enum"), list) and not any(_same(value, option) for option in schema["enum"]):
        return f"at {at}: {_short(value)} is not one of {_short(schema['enum'])}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"at {at}: expected {_short(schema['const'])}, got {_short(value)}"
    return None


def _check_parts(value: object, schema: dict, root: object, at: str, steps: list[int], depth: int) -> str | None:
    """allOf (each must match), anyOf (one at least) and oneOf (exactly one)."""
    for part in schema.get("allOf") if isinstance(schema.get("allOf"), list) else []:
        problem = _check(value, part, root, at, steps, depth + 1)
        if problem:
            return problem
    for keyword, wanted in (("anyOf", lambda n: n >= 1), ("oneOf", lambda n: n == 1)):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            matching = sum(_check(value, option, root, at, steps, depth + 1) is None for option in options)
            if not wanted(matching):
                return f"at {at}: matches {matching} of the {keyword} schemas"
    return None


def _check_items(value: object, schema: dict, root: object, at: str, steps: list[int], depth: int) -> str | None:
    if isinstance(value, list) and isinstance(schema.get("items"), (dict, bool)):
        for i, item in enumerate(value):
            problem = _check(item, schema["items"], root, f"{at}[{i}]", steps, depth + 1)
            if problem:
                return problem
    return None


def _check_object(value: dict, schema: dict, root: object, at: str, steps: list[int], depth: int) -> str | None:
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    missing = [key for key in required if isinstance(key, str) and key not in value]
    if missing:
        return f"at {at}: {_short(missing[0])} is required"
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{at}.{key}" if key.isidentifier() else f"{at}[{_short(key)}]"
        if key in properties:
            problem = _check(item, properties[key], root, where, steps, depth + 1)
        elif extra is False:
            problem = f"at {at}: {_short(key)} is not allowed (additionalProperties is false)"
        else:
            problem = _check(item, extra, root, where, steps, depth + 1) if isinstance(extra, dict) else None
        if problem:
            return problem
    return None


def _resolve(root: object, ref: str) -> object:
    """A "#..." reference within the schema; None for any other (never fetched)."""
    if not ref.startswith("#"):
        return None
    target = root
    for token in [t for t in ref[1:].split("/") if t]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and token in target:
            target = target[token]
        elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
            target = target[int(token)]
        else:
            return None
    return target


def _is(value: object, kind: object) -> bool:
    if kind == "integer":
        return type(value) is int or type(value) is float and value.is_integer()
    if kind == "number":
        return type(value) in (int, float)
    return kind in TYPES and type(value) is TYPES[kind]


def _same(a: object, b: object) -> bool:
    """JSON equality: 1 and 1.0 are the same number, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _kind(value: object) -> str:
    if type(value) in (int, float):
        return "integer" if type(value) is int else "number"
    return next((name for name, kind in TYPES.items() if type(value) is kind), type(value).__name__)


def _short(value: object) -> str:
    return fit(json.dumps(value, ensure_ascii=False), 60)


# --- x-mcp-header: a tool asks for arguments to be repeated in headers (2026-07-28, over HTTP) ----

# HTTP: a tool may ask for arguments to be repeated as Mcp-Param-<name> headers ("x-mcp-header" on a
# string, integer or boolean property); the name must be an HTTP token.
HEADER_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def mirrored(schema: object) -> list[tuple[tuple[str, ...], str]]:
    """(property path, header name) of every x-mcp-header in a tool's inputSchema; ValueError says
    why the tool cannot be used (a clash, a name that is no header, a property that is not a plain
    value or not reached through "properties" alone)."""
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(node: object, path: tuple[str, ...] | None) -> None:  # path None: not reached through properties
        if isinstance(node, list):
            for item in node:
                walk(item, None)
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            if not path:
                raise ValueError("x-mcp-header on something other than a property reached through \"properties\"")
            if not isinstance(name, str) or not HEADER_TOKEN.fullmatch(name):
                raise ValueError(f"x-mcp-header {shorten(json.dumps(name), 40)} is not a header name")
            if node.get("type") not in ("string", "integer", "boolean"):
                raise ValueError(f"x-mcp-header {name} is on a property that is not a string, integer or boolean")
            found.append((path, name))
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict) and path is not None:
                for prop, sub in value.items():
                    walk(sub, path + (prop,))
            elif key != "x-mcp-header":
                walk(value, None)

    try:
        walk(schema, ())
    except RecursionError:
        raise ValueError("inputSchema nested too deep to read") from None
    names = [name.lower() for _, name in found]
    if len(set(names)) != len(names):
        raise ValueError("two properties share one x-mcp-header name")
    return found


def param_values(schema: object, arguments: object) -> dict[str, str]:
    """The arguments a tool asks to see as Mcp-Param-<name> headers: name -> value as text, each present one."""
    values = {}
    for path, name in mirrored(schema):
        value = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool):
            values[name] = "true" if value else "false"
        elif isinstance(value, (int, str)):
            values[name] = str(value)
    return values
