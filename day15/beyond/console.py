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
import sys
import threading
import time
from collections.abc import Callable

from beyond.dirs import NOFOLLOW, exclusive, state_dir
from beyond.secrets import mask
from beyond.terminal import held_output, isatty, lines_above, shown, taken_typeahead
from beyond.turn import Activity, Output

# Lines of input kept across sessions.
HISTORY_LINES = 1000
# A question waiting for the prompt to give way says so again this often (a signal sent just
# before readline waits for a key is seen only at the next one).
YIELD_RESEND_S = 0.2
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
        self.terminal = isatty(self.stdin) and isatty(self.stdout)
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
        self._history_failed = False  # a write of the history file failed (said once a session)
        self._complete_words: Callable[[str, str], list[str]] = lambda text, line: []
        self._in_prompt = False
        self._started = False
        self._restore = ""
        self._typed_ahead: list[str] = []  # lines finished (Enter) while the model worked: the next messages
        self._asked = threading.local()  # per thread: (when it ended, how long) of its last questions

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

    def start_repl(self, complete_words: Callable[[str, str], list[str]]) -> None:
        """The prompt's readline: history across sessions (REPL lines only), Tab completion by
        complete_words(word, line), bracketed paste."""
        self._complete_words = complete_words
        if not isatty(self.stdin):
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

    def _remember(self, message: str) -> None:
        """A line entered at the prompt: into the prompt's history and, masked (a key pasted into a message is
        sent as typed, but never kept), appended to the history file at once, under its lock (another agent's
        lines stay; the file keeps the last HISTORY_LINES): an agent killed loses nothing typed."""
        self.readline.add_history(message)
        kept, at = mask(message), self.readline.get_current_history_length() - 1
        try:
            if kept != message:
                self.readline.replace_history_item(at, kept)
            with exclusive(history_path()):
                os.close(os.open(history_path(), os.O_WRONLY | os.O_CREAT | NOFOLLOW, 0o600))  # append needs one
                self.readline.append_history_file(1, history_path())
        except OSError as e:
            if not self._history_failed:
                self._history_failed = True
                print(f"warning: the history of typed lines is not kept: cannot write {history_path()} "
                      f"({e.strerror or e}; a full disk, or the file's mode?)", file=sys.stderr)
        finally:
            if kept != message:
                self.readline.replace_history_item(at, message)

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
        """The next message (several lines when pasted or continued with \\); None for Ctrl-D. A line the
        user finished while the model worked comes first, alone, as typed."""
        if self._typed_ahead:
            message = self._typed_ahead.pop(0)
            print(f"> {shown(message, one_line=True)}", file=self.stdout)  # as typed, made visible
            if self.readline:
                self._remember(message)
            return message
        lines: list[str] = []
        while True:
            try:
                line = self._prompt("... " if lines else "> ")
            except KeyboardInterrupt:  # Ctrl-C clears what was typed, as in a shell
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
                self._remember(message)
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
                with lines_above(prompt, self.readline, self.stdout):
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


    # --- questions -------------------------------------------------------------------------

    @contextlib.contextmanager
    def question(self, timeout: float | None = None):
        """Hold the terminal for one question (several lines may be read in it); Busy when it stays
        taken for longer than `timeout` seconds. Nested in a question of the same thread, it is that one."""
        me = threading.get_ident()
        if self._holder == me:
            yield
            return
        began = time.monotonic()
        try:
            with self._held(me, timeout):
                yield
        finally:
            asked = getattr(self._asked, "spans", None) or []
            self._asked.spans = asked[-15:] + [(time.monotonic(), time.monotonic() - began)]

    def asked_within(self, seconds: float) -> float:
        """How long this thread's questions took (waiting for the user) in the last `seconds`: what a
        tool call's duration in the audit log leaves out."""
        since = time.monotonic() - seconds
        return sum(min(took, end - since) for end, took in getattr(self._asked, "spans", []) if end > since)

    @contextlib.contextmanager
    def _held(self, me: int, timeout: float | None):
        self._take(me, timeout)
        held = held_output(me) if self.terminal else contextlib.nullcontext()
        try:
            with self.activity.paused(), held:
                self.fresh_line()
                lines, draft = taken_typeahead(self.stdin)
                self._typed_ahead += lines
                self._restore += draft
                yield
        finally:
            with self._turn:
                self._holder = None
                self._cancelled.discard(me)
                self._turn.notify_all()

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
                typed = self.read_line(f"{prompt} [y/N{'/a=always' if always else ''}] ")
            except EOFError:
                print(file=self.stdout)  # Ctrl-D: the "no" goes on a line of its own
                return False
        answer = typed.strip().lower()
        return "always" if always and answer in ("a", "always") else answer in ("y", "yes")

    def _on_interrupt(self, signum: int, frame) -> None:
        """Ctrl-C (main thread): a question another thread holds is cancelled; anything else is
        interrupted as usual."""
        holder = self._holder
        if isinstance(holder, int) and holder != self._main:
            self._cancelled.add(holder)
            os.write(self._wake[1], b"c")
            return
        raise KeyboardInterrupt
