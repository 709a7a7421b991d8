"""Beyond the tutorial: what the console (console.py) does with the terminal besides asking: it draws.

The activity line (spinner, running tool, progress), redrawn on a terminal and replaced by what
comes next; the answer as it streams in, tool lines between, token counts after; what servers write
while the prompt waits, drawn above it; what other threads print while a question holds the
terminal, held until it is answered; typeahead taken back for the prompt; text from a server or a
model, masked and made visible (shown).
"""
import contextlib
import os
import shutil
import sys
import threading
import time

try:
    import termios
except ImportError:  # Windows
    termios = None

from beyond.text import MaskedStream, clean, fit, mask_secrets

# The activity line is redrawn this often: often enough to look alive, rarely enough to cost nothing.
REDRAW_S = 0.1
# What other threads print while a question holds the terminal is kept up to this much, then written.
MAX_HELD_CHARS = 1 << 20
# What is taken back of typeahead, at most (a terminal's own line limit is 4 KB).
MAX_TYPEAHEAD_BYTES = 64 * 1024


class Activity:
    """The one line that says what is going on; on a terminal only, and always cleared before other output."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        self._lines = False  # without a terminal: what a running tool reports, a line each on stderr (-p)
        # _lock guards _text, _began, _paused and _drawing: the redraw thread, the progress callbacks
        # and the questions that pause the line share them.
        self._lock = threading.Lock()
        self._text: str | None = None
        self._began = 0.0
        self._paused = 0  # questions that hold the terminal now: the line waits for them
        # The redraw thread and the event that ends it, while the line is drawn.
        self._drawing: tuple[threading.Thread, threading.Event] | None = None

    @contextlib.contextmanager
    def waiting(self):
        """A spinner while the model thinks; the first streamed text ends it (stop())."""
        self.show("waiting for the model")
        try:
            yield
        finally:
            self.stop()

    @contextlib.contextmanager
    def tool(self, name: str):
        """'running <name>, N s' until the tool returns; what it yields takes what the server reports (calls
        of one reply run at once: each reports under its own name)."""
        said = [""]  # what this call said last, when its lines go to stderr

        def progress(text: str) -> None:
            if self._lines and not self.live and text != said[0]:
                said[0] = text
                print(f"[{name}] {shown(text, one_line=True)}", file=sys.stderr, flush=True)
            self.progress(text)
        self.show(f"running {name}")
        try:
            yield progress
        finally:
            self.stop()

    @contextlib.contextmanager
    def paused(self):
        """No line while the user is asked something (a server's form); it comes back after, unless
        what it said ended meanwhile."""
        with self._lock:
            self._paused += 1
            drawing, self._drawing = self._drawing, None
        self._clear(drawing)
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self._start()

    def report_lines(self) -> None:
        """No terminal to draw on (-p): what a running tool reports (a task's status) goes to stderr, a line
        each time it changes."""
        self._lines = True

    def progress(self, text: str) -> None:
        with self._lock:
            if self._text is not None:
                self._text = f"{self._text.split(' (', 1)[0]} ({text})"

    def show(self, text: str) -> None:
        if not self.live:
            return
        with self._lock:
            self._text, self._began = text, time.monotonic()
            self._start()

    def _start(self) -> None:
        """Caller holds _lock: draw the line, if there is one to draw and nothing pauses it."""
        if self._text is not None and self._drawing is None and not self._paused:
            stop = threading.Event()
            self._drawing = threading.Thread(target=self._draw, args=(self._began, stop), name="activity",
                                             daemon=True), stop
            self._drawing[0].start()

    def stop(self) -> None:
        """Clear the line (before anything else is printed)."""
        with self._lock:
            drawing, self._drawing, self._text = self._drawing, None, None
        self._clear(drawing)

    def _clear(self, drawing: tuple[threading.Thread, threading.Event] | None) -> None:
        if drawing:
            drawing[1].set()
            drawing[0].join(1.0)  # it wakes every REDRAW_S; bounded all the same
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()

    def _draw(self, began: float, stop: threading.Event) -> None:
        frames = "|/-\\"
        tick = 0
        while not stop.wait(REDRAW_S):
            with self._lock:
                text = self._text
            if text is None:
                return
            seconds = f", {time.monotonic() - began:.0f} s"
            # A line that wrapped cannot be cleared. A terminal that gives no size says 0 on Python 3.10: 80.
            room = (shutil.get_terminal_size().columns or 80) - 3 - len(seconds)
            shown_text = fit(text, room)
            sys.stdout.write(f"\r\033[K{frames[tick % 4]} {shown_text}{seconds}")
            sys.stdout.flush()
            tick += 1


class Output:
    """The answer printed as it streams in, tool lines between, token counts at the end (made by
    Console.output(): the newest one is the terminal's, and a question starts below what it left)."""

    def __init__(self, activity: Activity, tool_line_chars: int) -> None:
        self.activity, self.tool_line_chars, self.mid_line = activity, tool_line_chars, False
        self.tokens_in = self.tokens_out = 0
        self.masked = MaskedStream()  # a secret split across chunks is masked too: its start waits for the rest

    def text(self, chunk: str) -> None:
        self.activity.stop()  # the spinner gives way to the answer
        self._write(self.masked.feed(chunk))

    def _write(self, text: str) -> None:
        if text:
            sys.stdout.write(clean(text))
            sys.stdout.flush()
            self.mid_line = not text.endswith("\n")

    def tool(self, name: str, result: str) -> None:
        """The tutorial's [tool name -> result] line, the result shortened to one line."""
        self.end()
        line = fit(" ".join(result.split()), self.tool_line_chars)
        print(style(f"[tool {name} -> {shown(line, one_line=True)}]", "2"))

    def usage(self, usage: dict) -> None:
        counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
        self.tokens_in += counts[0] if type(counts[0]) is int else 0
        self.tokens_out += counts[1] if type(counts[1]) is int else 0

    def end(self) -> None:
        self._write(self.masked.rest())
        if self.mid_line:
            print()
            self.mid_line = False


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
    return clean(mask_secrets(text), one_line)


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
