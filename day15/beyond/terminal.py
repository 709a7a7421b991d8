"""Beyond the tutorial: what the console (console.py) does with the terminal besides asking and drawing a
turn (turn.py): what servers write while the prompt waits, drawn above it; what other threads print while
a question holds the terminal, held until it is answered; typeahead taken back for the prompt; text from a
server or a model, masked and made visible (shown, and quoted under a question's header).
"""
import contextlib
import os
import sys
import threading

try:
    import termios
except ImportError:  # Windows
    termios = None

from beyond.secrets import mask
from beyond.text import clean, shorten

# What other threads print while a question holds the terminal is kept up to this much, then written.
MAX_HELD_CHARS = 1 << 20
# What is taken back of typeahead, at most (a terminal's own line limit is 4 KB).
MAX_TYPEAHEAD_BYTES = 64 * 1024


class _AbovePrompt:
    """sys.stderr while the prompt waits: each whole line is written over the prompt's line, then the
    prompt and what was typed so far are drawn again below it (the cursor ends at the end of the typing)."""

    def __init__(self, stream, prompt: str, readline, stdout) -> None:
        self.stream, self.prompt, self.readline, self.stdout = stream, prompt, readline, stdout
        self._partial = ""
        self._lock = threading.Lock()  # guards _partial: lines come from the servers' threads

    def write(self, text: str) -> int:
        with self._lock:
            self._partial += text
            if "\n" in self._partial:
                lines, _, self._partial = self._partial.rpartition("\n")
                self.stream.write(f"\r\x1b[K{lines}\n")
                self.stream.flush()
                self.stdout.write(self.prompt + self.readline.get_line_buffer())
                self.stdout.flush()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            partial, self._partial = self._partial, ""
        if partial:
            self.stream.write(partial)
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def lines_above(prompt: str, readline, stdout):
    """While the prompt waits on a terminal, what goes to stderr is written above it."""
    if not readline or not isatty(sys.stderr):
        yield
        return
    real, sys.stderr = sys.stderr, _AbovePrompt(sys.stderr, prompt, readline, stdout)
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = real


class _Held:
    """sys.stdout or sys.stderr while a question holds the terminal: the question's own thread writes
    through; what other threads write is kept (up to MAX_HELD_CHARS) and written after the question."""

    def __init__(self, stream, owner: int) -> None:
        self.stream, self.owner = stream, owner
        self.kept: list[str] = []
        self.size = 0
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        if threading.get_ident() == self.owner:
            return self.stream.write(text)
        with self._lock:
            if self.size + len(text) <= MAX_HELD_CHARS:
                self.kept.append(text)
            self.size += len(text)
        return len(text)

    def flush(self) -> None:
        if threading.get_ident() == self.owner:
            self.stream.flush()

    def release(self) -> None:
        with self._lock:
            kept, size = "".join(self.kept), self.size
        if size > len(kept):
            kept += f"\n[... {size - len(kept):,} characters written meanwhile were dropped]\n"
        if kept:
            self.stream.write(kept)
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


@contextlib.contextmanager
def held_output(owner: int):
    """Hold what other threads print (sys.stdout and sys.stderr) while the owner asks its question."""
    held_out, held_err = _Held(sys.stdout, owner), _Held(sys.stderr, owner)
    sys.stdout, sys.stderr = held_out, held_err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = held_out.stream, held_err.stream
        held_out.release()
        held_err.release()


def taken_typeahead(stdin) -> tuple[list[str], str]:
    """What was typed before a question showed was meant for the prompt: it is taken from the terminal
    (a line not yet ended too, which only non-canonical mode lets be read), so it never becomes the
    question's answer: (the lines finished with Enter, each a message of its own; what follows them, a draft)."""
    if termios is None or not isatty(stdin):
        return [], ""
    fd = stdin.fileno()
    try:
        kept = termios.tcgetattr(fd)
    except termios.error:
        return [], ""
    now = list(kept)
    now[3] &= ~termios.ICANON
    now[6] = list(now[6])
    now[6][termios.VMIN], now[6][termios.VTIME] = 0, 0  # a read returns what is there, or nothing, at once
    typed = b""
    termios.tcsetattr(fd, termios.TCSANOW, now)
    try:
        while len(typed) < MAX_TYPEAHEAD_BYTES and (chunk := os.read(fd, MAX_TYPEAHEAD_BYTES)):
            typed += chunk
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, kept)
    *lines, draft = typed.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [line for line in lines if line.strip()], draft if draft.strip() else ""


def shown(text: str, one_line: bool = False) -> str:
    """What a server or model wrote, as the terminal shows it: masked, its control characters visible."""
    return clean(mask(text), one_line)


# A server's text in a question is shown up to this many lines, each marked as the server's.
MAX_QUOTED_LINES = 40
QUOTE = "  | "


def quoted(text: object, limit: int) -> str:
    """A server's words under the header that names it: masked, at most `limit` characters and
    MAX_QUOTED_LINES lines, each indented and marked (a newline cannot draw a line of ours),
    controls, bidi and invisible characters made visible."""
    lines = shorten(mask(str(text)), limit).split("\n")
    more = [f"{QUOTE}... ({len(lines) - MAX_QUOTED_LINES} more lines)"] if len(lines) > MAX_QUOTED_LINES else []
    return "\n".join([QUOTE + clean(line, one_line=True) for line in lines[:MAX_QUOTED_LINES]] + more)


def style(text: str, code: str) -> str:
    """ANSI colour when stdout is a terminal and NO_COLOR is unset; plain text otherwise."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text


def isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
