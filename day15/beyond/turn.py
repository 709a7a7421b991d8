"""Beyond the tutorial: what one turn draws, made by the console (console.py). The activity line: a spinner
while the model thinks, the running tool and what its server reports, redrawn on a terminal and cleared
before anything else is printed (without a terminal, -p, a running tool's reports are lines on stderr).
Then the answer as it streams in, masked, tool lines between, token counts after.
"""
import contextlib
import shutil
import sys
import threading
import time

from beyond.secrets import MaskedStream, mask
from beyond.terminal import shown, style
from beyond.text import clean, fit

# The activity line is redrawn this often: often enough to look alive, rarely enough to cost nothing.
REDRAW_S = 0.1


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
        text = mask(text)  # what a server reports of its work is the server's words
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
        print(style(f"[tool {shown(name, one_line=True)} -> {shown(line, one_line=True)}]", "2"))  # the model's name

    def usage(self, usage: dict) -> None:
        counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
        self.tokens_in += counts[0] if type(counts[0]) is int else 0
        self.tokens_out += counts[1] if type(counts[1]) is int else 0

    def end(self) -> None:
        self._write(self.masked.rest())
        if self.mid_line:
            print()
            self.mid_line = False
