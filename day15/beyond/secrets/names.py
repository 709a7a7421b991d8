"""Beyond the tutorial: what is secret by its name or its place: is_secret_name() for variables, keys, headers,
query parameters and flags alike; places() for the values of a server entry that are secret where they stand,
and masked_entry() to show one; the names of files that usually hold secrets (looks_secret()).
"""
import fnmatch
import functools
import json
import re
import urllib.parse
from collections.abc import Callable
from typing import NamedTuple

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "SESSION")
# Too short to hold by themselves ("author", "design"): secret only as a word of the name (X-Auth, sig).
WHOLE_WORDS = ("AUTH", "SIG")
# A name ending so holds a path or another name: its value is where a secret is, not the secret.
NOT_SECRET_ENDINGS = ("_FILE", "_PATH", "_DIR", "_ENV", "_VAR", "-FILE", "-PATH")
# The words of a name: api_key, X-Auth, basicAuth.
WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
# Headers that carry a credential whatever their name says, and the schemes written before one.
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "cookie", "x-api-key")
AUTH_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token|DPoP)\s+", re.IGNORECASE)
# What local endpoints take as a key (Ollama, LM Studio, vLLM) and what examples write: words, not secrets.
PLACEHOLDERS = {"none", "null", "empty", "test", "dummy", "fake", "placeholder", "changeme", "ollama", "lm-studio",
                "lmstudio", "no-key", "nokey", "not-needed", "sk-no-key-required", "sk-xxx", "sk-test", "sk-dummy",
                "sk-1234", "sk-placeholder"}
# Files that usually hold secrets: by name, by the folder they are in, and by their last two parts.
SECRET_FILES = (".env*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*", ".netrc",
                ".git-credentials", ".npmrc", ".pypirc", ".pgpass", "credentials.json", "*_history")
SECRET_FOLDERS = (".ssh", ".aws", ".kube", ".gnupg")
SECRET_PATHS = (".docker/config.json", ".git/config")
# A URL anywhere in a value (a database's in env, a server's in args).
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\"'<>]+")


@functools.lru_cache(maxsize=4096)  # names repeat: every variable, every key of every result
def is_secret_name(name: str) -> bool:
    """Whether a variable, key, header, query parameter or flag (without its dashes) names a secret."""
    upper = name.upper()
    if upper.endswith(NOT_SECRET_ENDINGS):
        return False
    if any(word in upper for word in SECRET_WORDS):
        return True
    return any(word.upper() in WHOLE_WORDS for word in WORDS.split(name))


def looks_secret(path: str) -> bool:
    """True for a path whose file name matches SECRET_FILES, that lies under a SECRET_FOLDERS folder,
    or that ends in one of SECRET_PATHS."""
    parts = path.replace("\\", "/").split("/")
    return (any(fnmatch.fnmatch(parts[-1], pattern) for pattern in SECRET_FILES)
            or any(part in SECRET_FOLDERS for part in parts[:-1]) or "/".join(parts[-2:]) in SECRET_PATHS)


class Place(NamedTuple):
    """A value of a server entry that is secret by its place: where (for a message), the name that makes it
    secret, the value, the string it stands in (entry[part], or entry[part][key]) and how: the whole string
    (after its scheme word, if any), a URL's password, or a query's value in a URL."""
    where: str
    name: str
    value: str
    part: str
    key: object = None
    within: str = "value"


def places(entry: dict) -> list[Place]:
    """Every value of a server entry that is secret by its place, as it stands (written, or expanded): env
    and headers under a secret-named key or a credential header (the scheme word taken off: `Bearer X` holds
    X), an args item after a secret-named flag or glued to one (`--token=X`), and in the URL, args and env
    every URL's password and secret-named query values."""
    found = []
    for key, value in strings(entry, "env").items():
        found += [Place(f"env {key}", str(key), value, "env", key)] if is_secret_name(str(key)) else []
        found += _in_urls(value, f"env {key}", "env", key)
    for key, value in strings(entry, "headers").items():
        if is_secret_name(str(key)) or str(key).lower() in CREDENTIAL_HEADERS:
            found.append(Place(f"header {key}", str(key), AUTH_SCHEME.sub("", value), "headers", key))
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    for i, arg in enumerate(args):
        if not isinstance(arg, str):
            continue
        flag, glued, value = arg.partition("=")
        before = args[i - 1] if i and isinstance(args[i - 1], str) else ""
        if _secret_flag(flag) and glued:
            found.append(Place(f"args[{i}] (after {flag})", flag.lstrip("-"), value, "args", i))
        elif _secret_flag(before) and not arg.startswith("-"):
            found.append(Place(f"args[{i}] (after {before})", before.lstrip("-"), arg, "args", i))
        found += _in_urls(arg, f"args[{i}]", "args", i)
    return found + _in_urls(entry.get("url"), "url", "url")


def masked_entry(entry: dict, keep: Callable[[str], bool] = lambda value: False) -> dict:
    """A copy of a server entry to show, each value at a secret place replaced by [masked] but those
    `keep` keeps (a ${VAR}, which is the environment's, not the file's)."""
    shown = json.loads(json.dumps(entry))
    for place in places(entry):
        if keep(place.value):
            continue
        holder, at = (shown[place.part], place.key) if place.key is not None else (shown, place.part)
        if place.within == "password":
            holder[at] = holder[at].replace(f":{place.value}@", ":[masked]@", 1)
        elif place.within == "query":
            holder[at] = holder[at].replace(f"{place.name}={place.value}", f"{place.name}=[masked]", 1)
        else:  # the whole string, after its scheme word if it has one
            holder[at] = holder[at][:len(holder[at]) - len(place.value)] + "[masked]"
    return shown


def strings(entry: dict, part: str) -> dict[str, str]:
    """The string values of an entry's table (env, headers); none when it is no table."""
    table = entry.get(part)
    return {key: value for key, value in table.items() if isinstance(value, str)} if isinstance(table, dict) else {}


def _secret_flag(word: str) -> bool:
    return word.startswith("-") and "=" not in word and is_secret_name(word.lstrip("-"))


def _in_urls(text: object, where: str, part: str, key: object = None) -> list[Place]:
    """The password and the secret-named query values (as written, not decoded) of every URL in `text`."""
    found = []
    for match in URL.finditer(text) if isinstance(text, str) else ():
        try:
            parts = urllib.parse.urlsplit(match.group(0))
        except ValueError:  # no URL after all ("http://[::1"): by place, its password is still masked
            continue
        if parts.password:
            found.append(Place(f"{where} (the URL's password)", "password", parts.password, part, key, "password"))
        for name, _, value in (pair.partition("=") for pair in parts.query.split("&")):
            if value and is_secret_name(name):
                found.append(Place(f"{where} (the URL's {name})", name, value, part, key, "query"))
    return found
