"""Beyond the tutorial: a tool result too long for the conversation is kept whole and read back by pages.

tools.py cuts a result at MAX_RESULT_CHARS and the rest is lost. The full agent keeps the whole of a
longer one in a file of the user's state ($XDG_STATE_HOME/geekagent/results/, mode 0600, never the
project folder; at most MAX_KEPT_BYTES in all, none older than MAX_AGE_S), and the model gets its
head and tail, its size and the file's name as its id, and the built-in tool read_result, which
reads a part of it back by id (never by path). Each page fits one result, so paging through a long
result over several replies stays inside the per-reply budget of chat.py.
"""
import os
import re
import threading
import time

from beyond.dirs import state_dir
from beyond.folder.approvals import ensure
from beyond.servers import toolset
from tools import MAX_RESULT_CHARS, Tool, cut

# Of a kept result, the model sees this much of its start and of its end.
HEAD_CHARS = 40_000
TAIL_CHARS = 10_000
# A page of read_result: this long unless asked otherwise, and never longer than one result may be.
PAGE_CHARS = 50_000
MAX_PAGE_CHARS = MAX_RESULT_CHARS - 200
# What is kept: at most this many bytes in all (the oldest go first), none older than a week;
# one result bigger than this is cut as tools.py cuts it.
MAX_KEPT_BYTES = 256 << 20
MAX_AGE_S = 7 * 24 * 3600
# The ids this module gives, and nothing else, are read.
RESULT_ID = re.compile(r"r-[0-9a-f]{1,16}-[0-9a-f]{12}\.txt")
NAME = "read_result"

class Results:
    """The kept results of one agent; _lock lets one keep (and its prune) happen at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def keep(self, name: str, text: str) -> str:
        """tools.py's shortening of a long result: kept whole, the model told its head, tail, size and id."""
        with self._lock:
            return keep(name, text)


def folder() -> str:
    return os.path.join(state_dir(), "results")


def keep(name: str, text: str) -> str:
    """A long result kept whole (the caller keeps one at a time): its head, tail, size and id."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_KEPT_BYTES:
        return cut(text, MAX_RESULT_CHARS)
    result_id = f"r-{time.time_ns():x}-{os.urandom(6).hex()}.txt"
    try:
        os.makedirs(folder(), mode=0o700, exist_ok=True)
        _prune(len(data))
        fd = os.open(os.path.join(folder(), result_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as f:
            f.write(data)
    except OSError as e:  # a full disk or a folder we may not write: cut, as without this module
        return cut(text, MAX_RESULT_CHARS) + f"\n[the whole result could not be kept: {e.strerror or e}]"
    _register()
    hidden = len(text) - HEAD_CHARS - TAIL_CHARS
    return (f"{text[:HEAD_CHARS]}\n[... {hidden:,} characters not shown of {len(text):,}: the whole result of {name} "
            f'is kept as "{result_id}"; read any part with {NAME} {{"id": "{result_id}", "offset": {HEAD_CHARS}, '
            f'"length": {PAGE_CHARS}}} ...]\n{text[-TAIL_CHARS:]}')


def read_result(args: dict) -> str:
    """One page of a kept result, after a line that says which characters it holds and where the next start."""
    result_id, offset, length = args.get("id"), args.get("offset", 0), args.get("length", PAGE_CHARS)
    if not isinstance(result_id, str) or not RESULT_ID.fullmatch(result_id):
        raise ValueError('"id" must be the id a cut result gave (like "r-18c2...-1a2b3c4d5e6f.txt"); it is no path')
    if type(offset) is not int or type(length) is not int or offset < 0 or length < 1:
        raise ValueError('"offset" must be a whole number from 0 and "length" one from 1')
    try:
        fd = os.open(os.path.join(folder(), result_id), os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise ValueError(f"{result_id} is no longer kept (results last {MAX_AGE_S // 86400} days)") from None
    with open(fd, "rb") as f:
        text = f.read().decode("utf-8", "surrogatepass")
    end = min(len(text), offset + min(length, MAX_PAGE_CHARS))
    where = "the end" if end >= len(text) else f"next offset {end}"
    said = f"[{result_id}: characters {min(offset, len(text)):,} to {end:,} of {len(text):,}; {where}]"
    return f"{said}\n{text[offset:end]}"


def _register() -> None:
    """read_result, from the first kept result on; allowed unless GeekAgent.json says otherwise (it
    reads only what a tool the user allowed returned)."""
    if toolset.get(NAME):
        return
    schema = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "string", "description": "the id a cut result gave"},
        "offset": {"type": "integer", "description": "the first character to read (default 0)"},
        "length": {"type": "integer", "description": f"how many characters (default {PAGE_CHARS}, "
                                                     f"at most {MAX_PAGE_CHARS})"}}}
    try:
        toolset.add(Tool(NAME, "Read a part of a tool result that was too long to show whole, by the id "
                                 "the cut result gave.", schema, read_result))
    except ValueError:
        return  # registered meanwhile by another thread
    ensure(NAME, "allow")


def _prune(room: int) -> None:
    """Remove what is older than MAX_AGE_S, then the oldest, until `room` more bytes fit (one keep at a time)."""
    kept, now = [], time.time()
    with os.scandir(folder()) as entries:
        for entry in entries:
            if RESULT_ID.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                kept.append((info.st_mtime, info.st_size, entry.path))
    total = sum(size for _, size, _ in kept)
    for mtime, size, path in sorted(kept):
        if now - mtime > MAX_AGE_S or total + room > MAX_KEPT_BYTES:
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
