"""Beyond the tutorial: the terminal form a server's elicitation is answered with (asks/handlers.py).

The flat schema MCP allows: string (with minLength, maxLength and the formats email, uri, date and
date-time), number and integer (minimum, maximum), boolean, a single choice (enum with enumNames,
or oneOf/anyOf with const and title) and a multi-select (an array of those, minItems, maxItems).
Each field is asked in turn and checked as typed, with what to type when it is wrong; Enter keeps
a default; then the form is shown whole: [a]ccept, [e]dit, [d]ecline, [c]ancel.
"""
import json
import re
import urllib.parse

from beyond.secrets import mask
from beyond.text import clean, shorten

# A field typed wrong is asked again this many times, then the form is cancelled.
FIELD_TRIES = 5
# A plain email address, for format "email"; URIs and dates are checked by their shape.
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")


def form(read_line, fields: dict, required: list[str]) -> dict:
    """Each field asked and checked, then the whole form reviewed; read_line(prompt) is the console's
    (KeyboardInterrupt or EOFError cancel the form, as the caller decides)."""
    values: dict = {}
    for name, spec in fields.items():
        _ask_field(read_line, name, spec if isinstance(spec, dict) else {}, name in required, values)
    while True:
        specs = {k: fields[k] if isinstance(fields.get(k), dict) else {} for k in values}  # titles, as asked
        print("  " + "\n  ".join(f"{_line(k, 80)}: {_shown(_titled(v, _choices(specs[k])))}"
                                 for k, v in values.items()) if values else "  (nothing)")
        choice = read_line("[a]ccept, [e]dit, [d]ecline, [c]ancel? ").strip().lower()
        if choice in ("a", "accept"):
            return {"action": "accept", "content": values}
        if choice in ("d", "decline"):
            return {"action": "decline"}
        if choice in ("c", "cancel"):
            return {"action": "cancel"}
        if choice in ("e", "edit"):
            name = read_line("which field? ").strip()
            if name in fields:
                field = fields[name] if isinstance(fields[name], dict) else {}
                _ask_field(read_line, name, field, name in required, values)


def _ask_field(read_line, name: str, spec: dict, required: bool, values: dict) -> None:
    label, about = _line(spec.get("title") or name, 80), _line(spec.get("description", ""), 200)
    choices = _choices(spec)
    if choices:
        for i, (value, title) in enumerate(choices, 1):
            print(f"    {i}. {_line(title, 80)}")
    default = values.get(name, spec.get("default"))
    hint = f" [{_shown(_titled(default, choices))}]" if default is not None else ""
    if choices and spec.get("type") == "array":
        hint = f" (numbers, such as 1,3){hint}"
    for _ in range(FIELD_TRIES):
        typed = read_line(f"  {label}{' (required)' if required else ''}{': ' + about if about else ''}"
                          f"{hint}: ").strip()
        if not typed:
            if default is not None:
                values[name] = default
                return
            if not required:
                values.pop(name, None)
                return
            print("    this one is required")
            continue
        try:
            values[name] = _typed(typed, spec, choices)
            return
        except ValueError as e:
            print(f"    {e}")
    raise KeyboardInterrupt  # the form is given up: cancelled


def _choices(spec: dict) -> list[tuple]:
    """(value, title) of an enum: enum with enumNames, oneOf/anyOf with const and title, or items of those."""
    source = spec.get("items") if spec.get("type") == "array" and isinstance(spec.get("items"), dict) else spec
    if isinstance(source.get("enum"), list):
        titles = source.get("enumNames") if isinstance(source.get("enumNames"), list) else source["enum"]
        return list(zip(source["enum"], titles))
    options = source.get("oneOf") or source.get("anyOf")
    if isinstance(options, list):
        return [(o.get("const"), o.get("title", o.get("const")))
                for o in options if isinstance(o, dict) and "const" in o]
    return []


def _typed(text: str, spec: dict, choices: list[tuple]):
    """The value `text` stands for in this field, or ValueError saying what to type."""
    kind = spec.get("type")
    if kind == "array":
        return _picked(text, spec, choices)
    if choices:
        return _pick(text, choices)
    if kind == "boolean":
        return _yes_or_no(text)
    if kind in ("number", "integer"):
        return _number(text, spec, kind)
    return _text(text, spec)


def _picked(text: str, spec: dict, choices: list[tuple]) -> list:
    """A multi-select: choices by number or title, separated by commas ("2 3" too), within min/maxItems."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) == 1 and all(word.isdigit() for word in parts[0].split()):
        parts = parts[0].split()  # "2 3" means 2 and 3, as "2,3" does
    picked = [_pick(part, choices) for part in parts]
    low, high = spec.get("minItems"), spec.get("maxItems")
    if (isinstance(low, int) and len(picked) < low) or (isinstance(high, int) and len(picked) > high):
        raise ValueError(f"pick between {low or 0} and {high or len(choices)}, separated by commas")
    return picked


def _yes_or_no(text: str) -> bool:
    if text.lower() in ("y", "yes", "true"):
        return True
    if text.lower() in ("n", "no", "false"):
        return False
    raise ValueError("type y or n")


def _number(text: str, spec: dict, kind: str) -> int | float:
    """A whole number or a number, within minimum and maximum."""
    try:
        value = int(text) if kind == "integer" else float(text)
    except ValueError:
        raise ValueError(f"type {'a whole number' if kind == 'integer' else 'a number'}") from None
    if isinstance(spec.get("minimum"), (int, float)) and value < spec["minimum"]:
        raise ValueError(f"at least {spec['minimum']}")
    if isinstance(spec.get("maximum"), (int, float)) and value > spec["maximum"]:
        raise ValueError(f"at most {spec['maximum']}")
    return value


def _text(text: str, spec: dict) -> str:
    """A string within minLength and maxLength, in its format (email, date, date-time, uri) when it names one."""
    if isinstance(spec.get("minLength"), int) and len(text) < spec["minLength"]:
        raise ValueError(f"at least {spec['minLength']} characters")
    if isinstance(spec.get("maxLength"), int) and len(text) > spec["maxLength"]:
        raise ValueError(f"at most {spec['maxLength']} characters")
    shape = {"email": EMAIL, "date": DATE, "date-time": DATE_TIME}.get(spec.get("format"))
    if shape and not shape.fullmatch(text):
        raise ValueError(f"type {'an email address' if spec['format'] == 'email' else 'a ' + spec['format']}")
    if spec.get("format") == "uri" and not urllib.parse.urlsplit(text).scheme:
        raise ValueError("type a URI (with its scheme, such as https:)")
    return text


def _pick(text: str, choices: list[tuple]):
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, title in choices:
        if text in (str(value), str(title)):
            return value
    raise ValueError(f"type a number from 1 to {len(choices)}")


def _titled(value, choices: list[tuple]):
    """A choice's value as the person sees it: its title (a list of them for a multi-select)."""
    titles = {json.dumps(v): t for v, t in choices}
    if isinstance(value, list) and choices:
        return [titles.get(json.dumps(v), v) for v in value]
    return titles.get(json.dumps(value), value) if choices else value


def _shown(value) -> str:
    """A value of the form (a server's default, or what was typed) as one cleaned, bounded line."""
    return _line(json.dumps(value, ensure_ascii=False), 200)


def _line(text: object, limit: int) -> str:
    """A server's words (a title, a description, a choice) as one line: masked, then bounded, then made visible."""
    return clean(shorten(mask(str(text)), limit), one_line=True)
