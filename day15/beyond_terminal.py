"""Beyond the tutorial: the terminal the way people expect it (the tutorial's TUI does this; input() alone does not).

Terminal.read_message(): Ctrl-C clears the line, Ctrl-D leaves, a paste of several lines is one
message (readline's bracketed paste), a line ending in \\ goes on on the next; history is kept
across sessions in the user's state directory; Tab completes commands and, after /call, tool names;
a line a server causes while the prompt waits (a changed tool list, a log line) is written above
the prompt, which is drawn again with what was typed.
Activity: one line that says what the agent is doing (waiting for the model, or a tool running with
its seconds and progress), redrawn on a terminal and replaced by what comes next; nothing without one.
Output: the answer as it streams in, tool lines between, token counts after; shown(): text from a
server or model, masked and with its control characters made visible.
"""
import contextlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable

from beyond_base import state_dir
from beyond_text import clean
from permissions import mask_secrets

# Lines of input kept across sessions.
HISTORY_LINES = 1000
# The activity line is redrawn this often: often enough to look alive, rarely enough to cost nothing.
REDRAW_S = 0.1


def history_path() -> str:
    """$XDG_STATE_HOME/geekagent/history (default ~/.local/state/geekagent/history)."""
    return os.path.join(state_dir(), "history")


class Terminal:
    """Reads one message at a time; on a terminal with readline: history, completion, bracketed paste."""

    def __init__(self, commands: list[str], tool_names: Callable[[], list[str]], ctrl_c_clears: bool = True,
                 mentions: Callable[[], list[str]] = list) -> None:
        self.commands, self.tool_names, self.ctrl_c_clears = commands, tool_names, ctrl_c_clears
        self.mentions = mentions  # @server: and @server:uri, for a word that starts with @
        self.readline = None
        if sys.stdin.isatty():
            with contextlib.suppress(ImportError):
                import readline
                self.readline = readline
                self._set_up(readline)

    def _set_up(self, readline) -> None:
        with contextlib.suppress(OSError):
            readline.read_history_file(history_path())
        readline.set_history_length(HISTORY_LINES)
        readline.set_completer(self._complete)
        readline.set_completer_delims(" ")
        readline.parse_and_bind("tab: complete")
        readline.parse_and_bind("set enable-bracketed-paste on")  # a paste arrives whole, newlines and all

    def _complete(self, text: str, state: int) -> str | None:
        line = self.readline.get_line_buffer()
        words = (self.mentions() if text.startswith("@") else self.tool_names() if line.startswith("/call ")
                 else self.commands if " " not in line else [])
        matches = [w for w in words if w.startswith(text)]
        if text.startswith("@") and text in matches and len(matches) > 1:
            matches.remove(text)  # "@server:" typed already: its URIs are what is left to complete
        if len(matches) == 1:
            matches = [matches[0] + " "]  # a unique completion goes on, as in a shell (readline adds no space)
        return matches[state] if state < len(matches) else None

    def read_message(self) -> str | None:
        """The next message (several lines when pasted or continued with \\); None for Ctrl-D."""
        lines: list[str] = []
        while True:
            try:
                with self._lines_above("... " if lines else "> ") as prompt:
                    line = input(prompt)
            except KeyboardInterrupt:  # Ctrl-C clears what was typed, as in a shell
                if not self.ctrl_c_clears:
                    raise
                print("^C" if self.readline else "")
                lines = []
                continue
            except EOFError:
                print()
                return None
            if line.endswith("\\") and not line.endswith("\\\\"):
                lines.append(line[:-1])
                continue
            return "\n".join([*lines, line])

    @contextlib.contextmanager
    def _lines_above(self, prompt: str):
        """While input() waits on a terminal, what goes to stderr is written above the prompt."""
        if not self.readline or not sys.stderr.isatty():
            yield prompt
            return
        real, sys.stderr = sys.stderr, _AbovePrompt(sys.stderr, prompt, self.readline)
        try:
            yield prompt
        finally:
            sys.stderr.flush()
            sys.stderr = real

    def save_history(self) -> None:
        if self.readline:
            with contextlib.suppress(OSError):
                os.makedirs(os.path.dirname(history_path()), exist_ok=True)
                self.readline.write_history_file(history_path())


class _AbovePrompt:
    """sys.stderr while the prompt waits: each whole line is written over the prompt's line, then the
    prompt and what was typed so far are drawn again below it (the cursor ends at the end of the typing)."""

    def __init__(self, stream, prompt: str, readline) -> None:
        self.stream, self.prompt, self.readline = stream, prompt, readline
        self._partial = ""
        self._lock = threading.Lock()  # guards _partial: lines come from the servers' threads

    def write(self, text: str) -> int:
        with self._lock:
            self._partial += text
            if "\n" in self._partial:
                lines, _, self._partial = self._partial.rpartition("\n")
                self.stream.write(f"\r\x1b[K{lines}\n")
                self.stream.flush()
                sys.stdout.write(self.prompt + self.readline.get_line_buffer())
                sys.stdout.flush()
        return len(text)

    def flush(self) -> None:
        with self._lock:
            partial, self._partial = self._partial, ""
        if partial:
            self.stream.write(partial)
        self.stream.flush()

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


class Activity:
    """The one line that says what is going on; on a terminal only, and always cleared before other output."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        # _lock guards _text and _thread: the redraw thread and the progress callbacks share them.
        self._lock = threading.Lock()
        self._text: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

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
        """No line while the user is asked something mid-call (a server's form); it comes back after."""
        with self._lock:
            text = self._text
        self.stop()
        try:
            yield
        finally:
            if text is not None:
                self.show(text)

    def progress(self, text: str) -> None:
        with self._lock:
            if self._text is not None:
                self._text = f"{self._text.split(' (', 1)[0]} ({text})"

    def show(self, text: str) -> None:
        if not self.live:
            return
        with self._lock:
            self._text, began = text, time.monotonic()
            if self._thread is None:
                self._stop.clear()
                self._thread = threading.Thread(target=self._draw, args=(began,), name="activity", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        """Clear the line (before anything else is printed)."""
        with self._lock:
            thread, self._thread, self._text = self._thread, None, None
        if thread:
            self._stop.set()
            thread.join(1.0)  # it wakes every REDRAW_S; bounded all the same
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()

    def _draw(self, began: float) -> None:
        frames = "|/-\\"
        tick = 0
        while not self._stop.wait(REDRAW_S):
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
