"""Beyond the tutorial: what the agent draws on the terminal (the tutorial's TUI does; print() does not).

Reading the terminal is beyond_console.py's. Activity: one line that says what the agent is doing
(waiting for the model, or a tool running with its seconds and progress), redrawn on a terminal
and replaced by what comes next; nothing without one.
Output: the answer as it streams in, tool lines between, token counts after; shown(): text from a
server or model, masked and with its control characters made visible.
"""
import contextlib
import os
import shutil
import sys
import threading
import time

from beyond_text import clean
from permissions import mask_secrets

# The activity line is redrawn this often: often enough to look alive, rarely enough to cost nothing.
REDRAW_S = 0.1


class Activity:
    """The one line that says what is going on; on a terminal only, and always cleared before other output."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
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
        """'running <name>, N s' until the tool returns; progress() adds what the server reports."""
        self.show(f"running {name}")
        try:
            yield self.progress
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
            shown_text = text if len(text) <= room else text[:max(room - 3, 0)] + "..."
            sys.stdout.write(f"\r\033[K{frames[tick % 4]} {shown_text}{seconds}")
            sys.stdout.flush()
            tick += 1


class Output:
    """The answer printed as it streams in, tool lines between, token counts at the end. The newest
    one is the terminal's: a question (fresh_line()) starts below the text it left mid-line."""

    current: "Output | None" = None

    def __init__(self, activity: Activity, tool_line_chars: int) -> None:
        self.activity, self.tool_line_chars, self.mid_line = activity, tool_line_chars, False
        self.tokens_in = self.tokens_out = 0
        Output.current = self

    def text(self, chunk: str) -> None:
        self.activity.stop()  # the spinner gives way to the answer
        sys.stdout.write(shown(chunk))
        sys.stdout.flush()
        self.mid_line = not chunk.endswith("\n")

    def tool(self, name: str, result: str) -> None:
        """The tutorial's [tool name -> result] line, the result shortened to one line."""
        self.end()
        line = " ".join(result.split())
        if len(line) > self.tool_line_chars:
            line = line[:self.tool_line_chars - 3] + "..."
        print(style(f"[tool {name} -> {shown(line, one_line=True)}]", "2"))

    def usage(self, usage: dict) -> None:
        counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
        self.tokens_in += counts[0] if type(counts[0]) is int else 0
        self.tokens_out += counts[1] if type(counts[1]) is int else 0

    def end(self) -> None:
        if self.mid_line:
            print()
            self.mid_line = False


def fresh_line() -> None:
    """End the line the streamed answer left open, so what comes next (a question) starts on its own."""
    if Output.current is not None:
        Output.current.end()


def shown(text: str, one_line: bool = False) -> str:
    """What a server or model wrote, as the terminal shows it: masked, its control characters visible."""
    return clean(mask_secrets(text), one_line)


def style(text: str, code: str) -> str:
    """ANSI colour when stdout is a terminal and NO_COLOR is unset; plain text otherwise."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text
