"""Beyond the tutorial: the one owner of what is secret. The tutorial shows and sends what servers say as it
is; here every text that leaves the agent (the terminal, /logs, /last, the audit log, -p, the model's
requests, the mcp verbs, the trust question, the history file) is masked against this inventory:

- secret-named, one rule for variables, entry keys, headers, query parameters and flags (is_secret_name):
  a name holding KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, COOKIE or SESSION, or AUTH or
  SIG as a whole word, but not one ending in _FILE, _PATH, _DIR, _ENV, _VAR, -file or -path (a path or a name);
- the agent's environment's secret-named values and the passwords of the URLs in it, a proxy's too (read as
  they are now), so the model key wherever it came from; a trusted .env's alike (folder/dotenv.py hands them
  in, also where the environment's value won);
- an entry's secrets, handed in when its server starts (wire/) or another client's file is imported: the
  literal at each secret place (places(): env and headers under a secret-named key or a credential header,
  the value after a secret-named flag in args, a URL's password and secret-named query values), and what a
  ${VAR} produced in env, headers or such a place. A folder's entries start only once it is trusted, so a
  hostile one cannot make common words vanish everywhere; before that its secrets are masked by place;
- the logins' access and refresh tokens, client secrets and client assertions (auth/).
Nothing takes a secret out: a server, a folder or a model can only add text to mask, never remove any.

Masking (mask(), MaskedStream for a stream): by value, a secret of ANYWHERE characters or more wherever it
stands, glued to other text too, a shorter one down to MIN_MASKED as a whole token, a shorter one never (the
placeholders of local endpoints neither); by place, at any length (scan.py). names.py holds the names and
places that say a value is secret, and the names of files that usually hold one. The inventory is the process's,
as its environment is: what one part learns, every other part masks, so it is the one thing of ours kept at
module level, added to only, under a lock.
"""
import collections
import json
import os
import re
import threading
import urllib.parse

from beyond.secrets.names import (AUTH_SCHEME, CREDENTIAL_HEADERS, PLACEHOLDERS, SECRET_FILES, SECRET_FOLDERS,
                                  SECRET_PATHS, Place, is_secret_name, looks_secret, masked_entry, places, strings)
from beyond.secrets.scan import MAX_NAME, by_place, triggered

__all__ = ["AUTH_SCHEME", "CREDENTIAL_HEADERS", "MIN_MASKED", "SECRET_FILES", "SECRET_FOLDERS", "SECRET_PATHS",
           "Inventory", "MaskedStream", "Place", "add", "is_secret_name", "learn_entry", "looks_secret", "mask",
           "masked_entry", "places"]

# A value shorter than this is never masked by value: it would mask ordinary words and digits everywhere.
MIN_MASKED = 8
# A value this long is masked wherever it stands, glued to other letters too (no word holds a 12-character
# key by chance); a shorter one only as a whole token, so the digits in a date or a word stay as they are.
ANYWHERE = 12
# The values handed in (entries, .env, client secrets): a user's files hold tens, never this many.
MAX_KEPT = 4096
# Of what rotates (a login's tokens, each assertion), the newest this many of each kind are kept: an hour's
# refreshes and more, and an authorization server that answers with a new token every second grows nothing.
MAX_ROTATING = 16
# A streamed line that may hold a secret by place waits whole until it ends, up to this much.
MAX_HELD_CHARS = 4096
# A value that starts so is a path: a variable that names a folder (${HOME}/bin) brings no secret.
PATH = re.compile(r"~|/|[A-Za-z]:[\\/]")


class Inventory:
    """What is secret in this process: the environment's secret-named values and URL passwords (read live
    from `environ`), and what the parts hand in; mask() replaces them by value, then every secret by place.
    _lock guards _kept, _rotating, _version and _built (the table made from them)."""

    def __init__(self, environ=os.environ) -> None:
        self.environ = environ
        self._kept: dict[str, str] = {}  # value -> what it is
        self._rotating: dict[str, collections.deque] = {}  # what they replace -> the newest (value, what it is)
        self._version = 0  # changed by every addition: the table is made again
        self._built: tuple | None = None  # (what it was made from, variants, their prefixes, the longest's length)
        self._lock = threading.Lock()

    def add(self, value: object, what: str, rotating: str | None = None) -> None:
        """Hand in a secret; `what` names it in the mask ([REDACTED:what]); `rotating` names what it replaces
        (a server's access token replaces its last one): the newest MAX_ROTATING of each are kept."""
        if not isinstance(value, str) or not value.strip():
            return
        with self._lock:
            if value in self._kept or len(self._kept) + len(self._rotating) >= MAX_KEPT:
                return
            if rotating is not None:
                newest = self._rotating.setdefault(rotating, collections.deque(maxlen=MAX_ROTATING))
                if (value, what) in newest:
                    return
                newest.append((value, what))
            else:
                self._kept[value] = what
            self._version += 1

    def learn_entry(self, written: dict, expanded: dict) -> None:
        """Hand in what a server about to start holds secret (wire/ calls this with its entry as written and
        as ${VAR} expanded): each value at a secret place, and each env or header value a ${VAR} changed, but
        a path."""
        for place in places(expanded):
            self.add(place.value, place.name)
        for part in ("env", "headers"):
            now = strings(expanded, part)
            for key, value in strings(written, part).items():
                if now.get(key, value) != value and not PATH.match(now[key]):
                    self.add(AUTH_SCHEME.sub("", now[key]), str(key))

    def values(self) -> dict[str, str]:
        """Every secret known now (value -> what it is), those too short to mask by value included."""
        with self._lock:
            held = {**self._kept, **{value: what for newest in self._rotating.values() for value, what in newest}}
        return {**dict(self._environment()), **held}

    def mask(self, text: str) -> str:
        """`text` with each known secret replaced by value ([REDACTED:what]), then every secret by place."""
        if not text:
            return text
        for variant, label, whole in self._variants()[0]:
            if variant in text:  # a find in C: the pattern, if any, runs only where the secret is
                text = whole.sub(label, text) if whole else text.replace(variant, label)
        return by_place(text)

    def safe_cut(self, text: str) -> int:
        """How much of streamed `text` may be shown now: not a line that may hold a secret by place (until it
        ends, within MAX_HELD_CHARS), not a last word that may still grow, not what may begin a secret."""
        variants, prefixes, longest = self._variants()
        start = text.rfind("\n") + 1
        if triggered(text[start:]):
            cut = max(start, len(text) - MAX_HELD_CHARS)
        elif text[-1:].isspace():
            cut = len(text)
        else:
            cut = max(start, text.rfind(" ") + 1, text.rfind("\t") + 1, len(text) - MAX_NAME)
        for at in range(max(0, len(text) - longest + 1), cut):
            if text[at:] in prefixes:
                cut = at
                break
        for variant, _, _ in variants:  # one that is whole but would be cut
            at = text.find(variant, max(0, cut - len(variant) + 1))
            if -1 < at < cut < at + len(variant):
                cut = at
        return cut

    def _environment(self) -> list[tuple[str, str]]:
        """(value, name) of each secret-named variable, and of the password and secret query values of a URL
        in any (a proxy's, a database's)."""
        found = []
        for name in self.environ:
            value = self.environ[name]
            if is_secret_name(name):
                found.append((value, name))
            elif "://" in value:
                found += [(place.value, name) for place in places({"env": {name: value}})]
        return found

    def _variants(self) -> tuple[list[tuple[str, str, "re.Pattern | None"]], frozenset, int]:
        """The table, made again when the environment or the inventory changed (see _variants_of)."""
        environment = tuple(self._environment())
        with self._lock:
            made_from = (environment, self._version)
            if self._built is None or self._built[0] != made_from:
                rotating = {value: what for newest in self._rotating.values() for value, what in newest}
                self._built = (made_from, *_variants_of({**rotating, **self._kept, **dict(environment)}))
            return self._built[1:]


def _variants_of(found: dict[str, str]) -> tuple[list, frozenset, int]:
    """(each form a secret may take in text, longest first, with its mask and, for a short one, its
    whole-token pattern; every proper prefix of them; the longest's length): as written, inside a JSON
    string (either way JSON writes letters beyond ASCII), and percent-encoded in a URL."""
    variants = {}
    for value, what in found.items():
        if len(value) < MIN_MASKED or value.lower() in PLACEHOLDERS:
            continue
        label = "[REDACTED:" + re.sub(r"[^A-Za-z0-9_.:-]", "_", what)[:64] + "]"
        for form in {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
                     urllib.parse.quote(value, safe="")}:
            whole = None if len(value) >= ANYWHERE else re.compile(f"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])")
            variants[form] = (label, whole)
    ordered = [(form, label, whole) for form, (label, whole) in sorted(variants.items(), key=lambda v: -len(v[0]))]
    prefixes = frozenset(form[:n] for form in variants for n in range(1, len(form)))
    return ordered, prefixes, max(map(len, variants), default=0)


# The process's inventory (see above), and what the parts call.
INVENTORY = Inventory()


def add(value: object, what: str, rotating: str | None = None) -> None:
    """Hand a secret in: from now on it is masked wherever text leaves the agent."""
    INVENTORY.add(value, what, rotating)


def learn_entry(written: dict, expanded: dict) -> None:
    """Hand in the secrets of a server about to start (Inventory.learn_entry)."""
    INVENTORY.learn_entry(written, expanded)


def mask(text: str) -> str:
    """`text` as it may leave the agent: every secret of the inventory masked, by value and by place."""
    return INVENTORY.mask(text)


class MaskedStream:
    """Text that comes in pieces (a streamed answer), masked as mask() masks it, with a secret split across
    pieces caught: what may be part of one is held back until the next piece or rest()."""

    def __init__(self, inventory: Inventory = INVENTORY) -> None:
        self.inventory = inventory
        self._held = ""

    def feed(self, piece: str) -> str:
        """What may be shown now of everything fed so far, masked."""
        text = self._held + piece
        cut = self.inventory.safe_cut(text)
        self._held = text[cut:]
        return self.inventory.mask(text[:cut])

    def rest(self) -> str:
        """What is held back, masked: the stream has ended."""
        text, self._held = self._held, ""
        return self.inventory.mask(text)
