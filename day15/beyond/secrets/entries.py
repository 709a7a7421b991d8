"""Beyond the tutorial: what a server entry holds that is secret by its place (places()), and the entry as it
may be shown (masked_entry()). A place is a span of one of its strings: env and headers under a secret-named
key or a credential header (what follows the scheme word: `Bearer X` holds X), the args item after a
secret-named flag, and in every env value, header, argument and the URL what is secret by place in any text
(scan.py: `--token=X`, `-e GH_TOKEN=X`, `"--api-key X"`, a URL's password and secret-named query values); and
a URL's user name when it stands alone (https://TOKEN@host: sent as a login). A value shown masks none
that reads as a command.
"""
import json
import re
import urllib.parse
from collections.abc import Callable
from typing import NamedTuple

from beyond.secrets.names import AUTH_SCHEME, CREDENTIAL_HEADERS, is_secret_name
from beyond.secrets.scan import spans

# A URL anywhere in a value (a database's in env, a server's in args): its user name and password.
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s\"'<>]+")


class Place(NamedTuple):
    """A secret of an entry: where it is (for a message), the name that makes it secret, its value, and the
    span it takes in the string it stands in (entry[part], or entry[part][key])."""
    where: str
    name: str
    value: str
    part: str
    key: object
    start: int
    end: int


def places(entry: dict) -> list[Place]:
    """Every value of a server entry that is secret by its place, as it stands (written, or expanded), once."""
    found = []
    for part in ("env", "headers"):
        for key, value in _strings(entry, part).items():
            named = is_secret_name(str(key)) or part == "headers" and str(key).lower() in CREDENTIAL_HEADERS
            where = f"{'env' if part == 'env' else 'header'} {key}"
            skip = len(AUTH_SCHEME.match(value).group(0)) if AUTH_SCHEME.match(value) else 0
            found += [Place(where, str(key), value[skip:], part, key, skip, len(value))] if named and value[skip:] \
                else _in_text(value, where, part, key)
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    for i, arg in enumerate(args):
        before = args[i - 1] if i and isinstance(args[i - 1], str) else ""
        flag, glued, value = arg.partition("=") if isinstance(arg, str) else ("", "", "")
        if _secret_flag(before) and arg and not arg.startswith("-"):
            found.append(Place(f"args[{i}] (after {before})", before.lstrip("-"), arg, "args", i, 0, len(arg)))
        elif _secret_flag(flag) and glued and value:  # --token=V: all of V, whatever it holds
            found.append(Place(f"args[{i}] (after {flag})", flag.lstrip("-"), value, "args", i, len(flag) + 1,
                               len(arg)))
        elif isinstance(arg, str):
            found += _in_text(arg, f"args[{i}]", "args", i)
    url = entry.get("url")
    return found + (_in_text(url, "url", "url", None) if isinstance(url, str) else [])


def masked_entry(entry: dict, keep: Callable[[str], bool] = lambda value: False) -> dict:
    """A copy of a server entry to show, each secret by place replaced by [masked] but those `keep` keeps (a
    ${VAR}, which is the environment's, not the file's), and any that reads as a command or code (COMMAND,
    CODE): what runs is never hidden."""
    shown = json.loads(json.dumps(entry))
    for place in sorted(places(entry), key=lambda p: -p.start):  # from the end: earlier spans keep their place
        data = place.part in ("env", "headers") or place.where.endswith(("password)", "user name)"))
        if keep(place.value) or (COMMAND if data else CODE).search(place.value):
            continue
        holder, at = (shown[place.part], place.key) if place.key is not None else (shown, place.part)
        holder[at] = holder[at][:place.start] + "[masked]" + holder[at][place.end:]
    return shown


# What makes a value a command rather than a credential: a pipe, a list, a redirection, a substitution; in an
# argument, which may be code another argument runs, white space, a quote or a bracket too (a password with
# `&`, `!` or `#` is still masked, and a passphrase in env or a quote in a URL's password).
COMMAND = re.compile(r"[|;<>`\n]|&&|\$\(")
CODE = re.compile(r"[|;<>`\s\"'()]|&&|\$[({]")


def _secret_flag(word: object) -> bool:
    return isinstance(word, str) and word.startswith("-") and "=" not in word and is_secret_name(word.lstrip("-"))


def _strings(entry: dict, part: str) -> dict[str, str]:
    table = entry.get(part)
    return {key: value for key, value in table.items() if isinstance(value, str)} if isinstance(table, dict) else {}


def _in_text(text: str, where: str, part: str, key: object) -> list[Place]:
    """What is secret by place in one of an entry's strings, and the user name and password of its URLs."""
    found = [Place(f"{where} (after {name})", name.lstrip("-"), text[start:end], part, key, start, end)
             for start, end, name in spans(text)]
    urls = [(0, text)] if URL.match(text) else [(m.start(), m.group(0)) for m in URL.finditer(text)]  # whole: "'"
    for begins, url in urls:
        try:
            parts = urllib.parse.urlsplit(url)
        except ValueError:  # no URL after all ("http://[::1"): by place, its password is still masked
            continue
        user, _, password = parts.netloc.rpartition("@")[0].partition(":")
        if password or user and parts.scheme in ("http", "https"):
            at = begins + len(parts.scheme) + 3 + (len(user) + 1 if password else 0)
            secret = password or user
            found.append(Place(f"{where} (the URL's {'password' if password else 'user name'})",
                               "password" if password else "user", secret, part, key, at, at + len(secret)))
    return found
