"""Beyond the tutorial: the one owner of the terminal. Every line read from the user comes through here.

The tutorial reads its prompt with readline and asks its y/N in the same terminal; the full agent
also has servers that ask (forms, pages to open, sampling) from their own threads, a login that
waits for a pasted address, and the trust question. Here one Console gives the terminal to one
question at a time: a question that arrives while another holds it waits (up to its timeout); one
that arrives at the `> ` prompt takes the terminal whole (the prompt is put away, what was typed kept
and drawn again after), so a line typed for it never becomes a chat message; Ctrl-C cancels the
question in front of the user (for one asked on another thread, the main thread is told so by the
signal handler installed here) and the next line goes back to the REPL. Questions are read as
plain lines, never through readline: only REPL lines enter the history file. While a question holds
the terminal, what other threads print is held and written after it, and the activity line gives way.
"""
import contextlib
import os
import select
import signal
import shutil
import sys
import threading
import time
from collections.abc import Callable

try:
    import termios
except ImportError:  # Windows
    termios = None

from beyond.dirs import state_dir
from beyond.text import clean
from permissions import mask_secrets

# Lines of input kept across sessions.
HISTORY_LINES = 1000
# A question waiting for the prompt to give way says so again this often (a signal sent just
# before readline waits for a key is seen only at the next one).
YIELD_RESEND_S = 0.2
# What other threads print while a question holds the terminal is kept up to this much, then written.
MAX_HELD_CHARS = 1 << 20
# The longest line a question reads (a terminal's own line limit is 4 KB; a pasted address fits).
MAX_ANSWER_BYTES = 64 * 1024


def history_path() -> str:
    """$XDG_STATE_HOME/geekagent/history (default ~/.local/state/geekagent/history)."""
    return os.path.join(state_dir(), "history")


class Busy(Exception):
    """The terminal stayed taken by other questions for as long as this one could wait."""


class _Yield(Exception):
    """Raised in the main thread's prompt by the wake-up signal: a question is waiting for the terminal."""


class Console:
    """The terminal: the REPL prompt (read_message), questions (question, read_line, confirm),
    and the activity line. `stdin`/`stdout` are sys's unless given (tests)."""

    def __init__(self, stdin=None, stdout=None) -> None:
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout
        self.terminal = _isatty(self.stdin) and _isatty(self.stdout)
        self.activity = Activity()
        self._output: Output | None = None  # the newest turn's (output())
        # _turn (a condition on _lock) guards _holder, _waiting and _in_prompt: who has the terminal
        # now (None, the REPL prompt or a question's thread), how many questions wait for it.
        self._lock = threading.Lock()
        self._turn = threading.Condition(self._lock)
        self._holder: object = None
        self._waiting = 0
        self._cancelled: set[int] = set()  # threads whose question Ctrl-C cancelled
        self._wake: tuple[int, int] | None = None  # a pipe Ctrl-C writes to, to wake a question's read
        self._main = threading.main_thread().ident
        self._signals = False
        # The REPL's readline state (start_repl), and what the prompt held when it gave way.
        self.readline = None
        self._complete_words: Callable[[str, str], list[str]] = lambda text, line: []
        self.ctrl_c_clears = True
        self._in_prompt = False
        self._started = False
        self._restore = ""

    # --- set-up ----------------------------------------------------------------------------

    def take_signals(self) -> None:
        """Route Ctrl-C to the question in front of the user, and let a question wake the prompt
        (main thread only, as Python's signal handlers are)."""
        if not self.terminal or threading.get_ident() != self._main:
            return
        self._wake = self._wake or os.pipe()
        signal.signal(signal.SIGINT, self._on_interrupt)
        if hasattr(signal, "pthread_kill"):
            signal.signal(signal.SIGUSR1, self._on_wake)
            self._signals = True

    def start_repl(self, complete_words: Callable[[str, str], list[str]], ctrl_c_clears: bool = True) -> None:
        """The prompt's readline: history across sessions (REPL lines only), Tab completion by
        complete_words(word, line), bracketed paste."""
        self._complete_words, self.ctrl_c_clears = complete_words, ctrl_c_clears
        if not _isatty(self.stdin):
            return
        with contextlib.suppress(ImportError):
            import readline
            self.readline = readline
            with contextlib.suppress(OSError):
                readline.read_history_file(history_path())
            readline.set_history_length(HISTORY_LINES)
            readline.set_auto_history(False)  # a question's answer (a token in a form) is never kept
            readline.set_completer(self._complete)
            readline.set_completer_delims(" ")
            readline.parse_and_bind("tab: complete")
            readline.parse_and_bind("set enable-bracketed-paste on")  # a paste arrives whole, newlines and all
            readline.set_pre_input_hook(self._prompt_started)

    def save_history(self) -> None:
        if self.readline:
            with contextlib.suppress(OSError):
                os.makedirs(os.path.dirname(history_path()), exist_ok=True)
                self.readline.write_history_file(history_path())

    def output(self, tool_line_chars: int) -> "Output":
        """Where one turn's answer goes: text as it streams, tool lines, token counts."""
        self._output = Output(self.activity, tool_line_chars)
        return self._output

    def fresh_line(self) -> None:
        """End the line the streamed answer left open, so what comes next (a question) starts on its own."""
        if self._output is not None:
            self._output.end()

    # --- the REPL prompt -------------------------------------------------------------------

    def read_message(self) -> str | None:
        """The next message (several lines when pasted or continued with \\); None for Ctrl-D."""
        lines: list[str] = []
        while True:
            try:
                line = self._prompt("... " if lines else "> ")
            except KeyboardInterrupt:  # Ctrl-C clears what was typed, as in a shell
                if not self.ctrl_c_clears:
                    raise
                print("^C" if self.readline else "", file=self.stdout)
                lines = []
                continue
            except EOFError:
                print(file=self.stdout)
                return None
            if line.endswith("\\") and not line.endswith("\\\\"):
                lines.append(line[:-1])
                continue
            message = "\n".join([*lines, line])
            if self.readline and message.strip():
                self.readline.add_history(message)
            return message

    def _prompt(self, prompt: str) -> str:
        """One line at the prompt, given up (and taken again, what was typed kept) whenever a
        question comes for the terminal."""
        while True:
            with self._turn:
                while self._holder is not None or self._waiting:
                    self._turn.wait(YIELD_RESEND_S)  # questions first; Ctrl-C here cancels the one in front
                self._holder, self._started = "prompt", False
            try:
                with self._lines_above(prompt):
                    self._in_prompt = True
                    try:
                        return input(prompt)
                    finally:
                        self._in_prompt = False
            except _Yield:
                self.stdout.write("\r\x1b[K")  # the prompt is put away; it comes back below the question
                self.stdout.flush()
            finally:
                with self._turn:
                    self._holder = None
                    self._turn.notify_all()

    def _prompt_started(self) -> None:
        """readline's pre-input hook: the prompt is drawn; what it held when it gave way is typed back."""
        self._started = True
        if self._restore:
            self.readline.insert_text(self._restore)
            self._restore = ""
            self.readline.redisplay()

    def _on_wake(self, signum: int, frame) -> None:
        """The wake-up signal (main thread): at the prompt, with a question waiting, give way."""
        if self._in_prompt and self._waiting:
            if self._started:  # else readline had not begun: what it was to show is still _restore
                self._restore = self.readline.get_line_buffer() if self.readline else ""
            raise _Yield

    def _complete(self, text: str, state: int) -> str | None:
        matches = self._complete_words(text, self.readline.get_line_buffer())
        if len(matches) == 1:
            matches = [matches[0] + " "]  # a unique completion goes on, as in a shell (readline adds no space)
        return matches[state] if state < len(matches) else None

    @contextlib.contextmanager
    def _lines_above(self, prompt: str):
        """While the prompt waits on a terminal, what goes to stderr is written above it."""
        if not self.readline or not _isatty(sys.stderr):
            yield
            return
        real, sys.stderr = sys.stderr, _AbovePrompt(sys.stderr, prompt, self.readline, self.stdout)
        try:
            yield
        finally:
            sys.stderr.flush()
            sys.stderr = real

    # --- questions -------------------------------------------------------------------------

    @contextlib.contextmanager
    def question(self, timeout: float | None = None):
        """Hold the terminal for one question (several lines may be read in it); Busy when it stays
        taken for longer than `timeout` seconds. Nested in a question of the same thread, it is that one."""
        me = threading.get_ident()
        if self._holder == me:
            yield
            return
        self._take(me, timeout)
        held = _hold_output(me) if self.terminal else contextlib.nullcontext()
        try:
            with self.activity.paused(), held:
                self.fresh_line()
                self._keep_typeahead()
                yield
        finally:
            with self._turn:
                self._holder = None
                self._cancelled.discard(me)
                self._turn.notify_all()

    def _keep_typeahead(self) -> None:
        """What was typed before the question showed was meant for the prompt: it is taken from the
        terminal (a line not yet ended too, which only non-canonical mode lets be read) and given back to
        the prompt's next line, so it never becomes the question's answer."""
        if not self.terminal or termios is None:
            return
        fd = self.stdin.fileno()
        try:
            kept = termios.tcgetattr(fd)
        except termios.error:
            return
        now = list(kept)
        now[3] &= ~termios.ICANON
        now[6] = list(now[6])
        now[6][termios.VMIN], now[6][termios.VTIME] = 0, 0  # a read returns what is there, or nothing, at once
        typed = b""
        termios.tcsetattr(fd, termios.TCSANOW, now)
        try:
            while len(typed) < MAX_ANSWER_BYTES and (chunk := os.read(fd, MAX_ANSWER_BYTES)):
                typed += chunk
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, kept)
        text = " ".join(typed.decode("utf-8", "replace").split("\n")).replace("\r", "")
        if text.strip():
            self._restore += text

    def _take(self, me: int, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._turn:
            self._waiting += 1
            try:
                while self._holder is not None:
                    if self._holder == "prompt" and self._signals and me != self._main:
                        signal.pthread_kill(self._main, signal.SIGUSR1)  # the prompt gives way
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise Busy("the terminal is answering another question")
                    self._turn.wait(YIELD_RESEND_S if left is None else min(left, YIELD_RESEND_S))
                self._holder = me
            finally:
                self._waiting -= 1

    def read_line(self, prompt: str, until: Callable[[], bool] | None = None) -> str | None:
        """One line typed for the question held (as input() reads it: KeyboardInterrupt for Ctrl-C,
        EOFError for Ctrl-D), without readline; None once `until()` is true before a line came."""
        self.stdout.write(prompt)
        self.stdout.flush()
        if not self.terminal:
            line = self.stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\n")
        fd, got, me = self.stdin.fileno(), b"", threading.get_ident()
        self._wake = self._wake or os.pipe()  # one question at a time reads, so one pipe is made
        wake = self._wake[0]
        while not got.endswith(b"\n"):
            ready = select.select([fd, wake], [], [], 0.1 if until else None)[0]
            if wake in ready:
                os.read(wake, 64)
            if me in self._cancelled:
                self._cancelled.discard(me)
                raise KeyboardInterrupt
            if fd in ready:
                chunk = os.read(fd, MAX_ANSWER_BYTES)
                if not chunk:
                    raise EOFError
                got += chunk
            elif until and until():
                return None
        return got[:MAX_ANSWER_BYTES].decode("utf-8", "replace").rstrip("\r\n")

    def confirm(self, prompt: str, always: bool = True, timeout: float | None = None) -> bool | str:
        """y or yes is True; a or always (when offered) "always"; anything else, Enter and Ctrl-D no."""
        with self.question(timeout):
            try:
                answer = self.read_line(f"{prompt} [y/N{'/a=always' if always else ''}] ").strip().lower()
            except EOFError:
                print(file=self.stdout)  # Ctrl-D: the "no" goes on a line of its own
                return False
        if always and answer in ("a", "always"):
            return "always"
        return answer in ("y", "yes")

    def _on_interrupt(self, signum: int, frame) -> None:
        """Ctrl-C (main thread): a question another thread holds is cancelled; anything else is
        interrupted as usual."""
        holder = self._holder
        if isinstance(holder, int) and holder != self._main:
            self._cancelled.add(holder)
            os.write(self._wake[1], b"c")
            return
        raise KeyboardInterrupt


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
def _hold_output(owner: int):
    """Hold what other threads print (sys.stdout and sys.stderr) while the owner asks its question."""
    held_out, held_err = _Held(sys.stdout, owner), _Held(sys.stderr, owner)
    sys.stdout, sys.stderr = held_out, held_err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = held_out.stream, held_err.stream
        held_out.release()
        held_err.release()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


# --- what the agent draws: the activity line, the streamed answer, text made safe to show ---

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
    """The answer printed as it streams in, tool lines between, token counts at the end (made by
    Console.output(): the newest one is the terminal's, and a question starts below what it left)."""

    def __init__(self, activity: Activity, tool_line_chars: int) -> None:
        self.activity, self.tool_line_chars, self.mid_line = activity, tool_line_chars, False
        self.tokens_in = self.tokens_out = 0

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


def shown(text: str, one_line: bool = False) -> str:
    """What a server or model wrote, as the terminal shows it: masked, its control characters visible."""
    return clean(mask_secrets(text), one_line)


def style(text: str, code: str) -> str:
    """ANSI colour when stdout is a terminal and NO_COLOR is unset; plain text otherwise."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text
