"""Beyond the tutorial: settings from a .env file, so a key need not live in the shell profile.

The project folder's .env is read once, with the folder's other files (folder/trust.py), and takes
effect only once the folder is trusted; what is already in the environment wins. Its secret-named values and
URL passwords are secrets wherever text goes (secrets/), also those the environment's won over.
"""
import os
import sys

from beyond import secrets

DOTENV_PATH = ".env"
# A .env's secrets handed in for masking, at most: a file of thousands would slow every line the agent shows.
MAX_SECRETS = 256


def load_dotenv(path: str = DOTENV_PATH, settings: tuple[dict[str, str], list[str]] | None = None) -> None:
    """KEY=VALUE lines (the file's, or `settings` as already read) into the environment; variables
    already set win; problems are warnings."""
    settings, warnings = read_dotenv(path) if settings is None else settings
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for key, value in settings.items():
        os.environ.setdefault(key, value)
    for place in secrets.places({"env": settings})[:MAX_SECRETS]:  # secret-named values, URLs' passwords
        secrets.add(place.value, place.name)


def read_dotenv(path: str) -> tuple[dict[str, str], list[str]]:
    """The settings of a .env file and what was wrong with it (each naming the file and line).

    Understood: `export `, comments, 'single' and "double" quotes (in double quotes \n, \t, \"
    and \\ are escapes), a comment after a quoted value, a UTF-8 byte order mark.
    """
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 20)
    except FileNotFoundError:
        return {}, []
    except OSError as e:  # a directory, no permission...
        return {}, [f"{path} cannot be read ({e.strerror or e}); it is ignored"]
    return parse_dotenv(raw, path)


def parse_dotenv(raw: bytes | None, path: str) -> tuple[dict[str, str], list[str]]:
    """The settings in a .env file's bytes, and what was wrong with them."""
    if raw is None:
        return {}, []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        return {}, [f"{path}:{line}: not UTF-8; the file is ignored"]
    settings, warnings = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "a").isalnum() or "\0" in value:
            warnings.append(f"{path}:{number}: not a KEY=VALUE line; skipped")
            continue
        settings[key] = _dotenv_value(value.strip())
    return settings, warnings


def _dotenv_value(value: str) -> str:
    """A quoted value up to its closing quote (a comment may follow); an unquoted one up to ' #'."""
    if value[:1] == "'" and "'" in value[1:]:
        return value[1:value.index("'", 1)]
    if value[:1] == '"':
        out, i = [], 1
        while i < len(value) and value[i] != '"':
            if value[i] == "\\" and i + 1 < len(value):
                i += 1
                out.append({"n": "\n", "t": "\t"}.get(value[i], value[i]))
            else:
                out.append(value[i])
            i += 1
        return "".join(out)
    return value.split(" #", 1)[0].strip()
