"""Beyond the tutorial: the project's folder, found upward, and its .geekagent/mcp.json and .env
taking effect only once the user trusts them (the .env file itself is beyond the tutorial too).

The tutorial starts every server in mcp.json and reads .env, so starting the agent in a cloned
folder would run that folder's commands, and a .env could send your API key to another host.
Here the agent first shows what the folder would run and change and asks, once per content:
the answer is kept in the user's own config directory ($XDG_CONFIG_HOME/geekagent/), never in
the folder. Without a terminal nothing is asked: --trust or GEEKAGENT_TRUST=1 trusts for one run.
"""
import hashlib
import json
import os
import shlex
import sys

from beyond_text import clean, shorten
from permissions import SECRET_NAME

# The files a folder's trust covers, relative to the folder.
TRUSTED_FILES = (".geekagent/mcp.json", ".env")
# What a trusted folder's .env may change that decides where the conversation (and the key) goes.
MODEL_SETTINGS = "OPENAI_"
# A file bigger than this is not a config anyone wrote by hand; it is hashed but not shown.
MAX_SHOWN_BYTES = 1 << 20


def find_project() -> str | None:
    """The nearest folder (this one or a parent) with a .geekagent/ in it, found as git finds .git;
    it becomes the working folder, so starting from a subfolder works."""
    folder = os.getcwd()
    while not os.path.isdir(os.path.join(folder, ".geekagent")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    os.chdir(folder)  # mcp.json, .env, GeekAgent.json, relative server paths and the built-ins' root
    return folder


def store_path() -> str:
    """Where the answers are kept: the user's config directory, never the folder itself."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent", "trusted-folders.json")


def fingerprint(folder: str) -> str | None:
    """A hash of the folder's trusted files as they are now; None when it has none of them."""
    digest, found = hashlib.sha256(), False
    for name in TRUSTED_FILES:
        try:
            with open(os.path.join(folder, name), "rb") as f:
                content = f.read()
        except OSError:  # missing (or unreadable: then it is not used either)
            continue
        found = True
        digest.update(f"{name}\0{len(content)}\0".encode() + content)
    return digest.hexdigest() if found else None


def decide(folder: str, trust_now: bool, ask) -> bool:
    """Whether the folder's files may take effect: nothing to trust, --trust, remembered, or asked.

    `ask` is None without a terminal; otherwise it takes the question and returns the answer.
    """
    key, current = os.path.realpath(folder), fingerprint(folder)
    if current is None or trust_now or _load().get(key) == current:
        return True
    if ask is None:
        _say(f"{clean(key, one_line=True)}: its .geekagent/mcp.json and .env are not trusted yet, so no server starts and "
               ".env is not read. Start the agent in a terminal to review them, or pass --trust "
               "(or set GEEKAGENT_TRUST=1) to trust them for this run.")
        return False
    print("\n".join(summary(folder)))
    if not ask("Trust this folder: start these servers and use this .env?"):
        print("Not trusted: no server starts and .env is not read (built-in tools only).")
        return False
    _remember(key, current)
    return True


def summary(folder: str) -> list[str]:
    """What trusting the folder would do: every server's whole command line or URL, and the model settings."""
    lines = [f"This folder has its own agent configuration: {clean(os.path.realpath(folder), one_line=True)}"]
    try:
        servers = _read_json(os.path.join(folder, ".geekagent/mcp.json")).get("mcpServers") or {}
        for name, entry in servers.items():
            lines.append(f"  server {clean(shorten(str(name), 80), one_line=True)}: {_what_runs(entry)}")
    except (OSError, ValueError, AttributeError) as e:
        if not isinstance(e, FileNotFoundError):
            lines.append(f"  .geekagent/mcp.json cannot be read ({clean(str(e), one_line=True)}); "
                         "it will be reported when the agent starts")
    settings, _ = read_dotenv(os.path.join(folder, ".env"))
    for key, value in settings.items():
        if key.startswith(MODEL_SETTINGS) and os.environ.get(key) is None:
            shown = "[a secret]" if SECRET_NAME.search(key) else clean(shorten(value, 200), one_line=True)
            lines.append(f"  .env sets {clean(key, one_line=True)}={shown}")
    return lines


def _what_runs(entry: object) -> str:
    """The exact command line (every argument, control characters made visible) or the URL."""
    if not isinstance(entry, dict):
        return "(not an object: it will be refused)"
    if "url" in entry:
        return f"connects to {clean(str(entry['url']), one_line=True)}"
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    command = shlex.join(str(part) for part in [entry.get("command", ""), *args])
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    extra = f" with env {', '.join(clean(str(k), one_line=True) for k in env)}" if env else ""
    return f"runs {clean(command, one_line=True)}{extra}"


def _read_json(path: str) -> dict:
    if os.path.getsize(path) > MAX_SHOWN_BYTES:
        raise ValueError(f"over {MAX_SHOWN_BYTES >> 20} MB")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, dict) else {}


def _load() -> dict:
    try:
        with open(store_path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}  # nothing remembered yet (or unreadable): the user is asked
    return data if isinstance(data, dict) else {}


def _remember(key: str, current: str) -> None:
    """Keep the answer (the folder and its files' hash); a failure to write only costs a question next time."""
    path = store_path()
    trusted = {**_load(), key: current}
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(f"{path}.tmp", "w", encoding="utf-8") as f:
            json.dump(trusted, f, indent=1)
        os.replace(f"{path}.tmp", path)
    except OSError as e:
        _say(f"warning: could not remember the answer in {path}: {e.strerror or e}")


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# Beyond the tutorial: settings from a .env file, so a key need not live in the shell profile.
def load_dotenv(path: str = ".env") -> None:
    """Read KEY=VALUE lines into the environment (variables already set win); problems are warnings."""
    settings, warnings = read_dotenv(path)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for key, value in settings.items():
        os.environ.setdefault(key, value)


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
