"""Beyond the tutorial: the tool calls of one model reply, as the full agent runs them (ModelChat.run_calls).

The lesson runs a reply's calls one after another, each result whole. Here one reply runs at most
MAX_CALLS_PER_REPLY calls, and their results add at most MAX_REPLY_RESULT_CHARS to the conversation. Every
question of a reply is asked before any of its calls runs; then they run at once, each on a thread of its own:
a Ctrl-C, which reaches the main thread only, cancels them too (waits.Cancel), so their servers hear of it
before the turn ends.
"""
import threading
import time
from collections.abc import Callable

from beyond.waits import SIGNAL_CHECK_S, Cancel

# One reply runs at most this many tool calls (the rest are answered "not run"), and its results add
# at most this many characters (about 100,000 tokens) to the conversation, the rest cut with a note:
# one reply cannot make this and every later request megabytes long.
MAX_CALLS_PER_REPLY = 32
# After a Ctrl-C, the calls still running on their threads get this long to tell their servers and end.
CANCEL_WAIT_S = 2.0
MAX_REPLY_RESULT_CHARS = 400_000
NOT_RUN = ("not run: too many calls in one reply (at most {limit}); make this call again in your next reply "
           "if it is still needed")


def run_reply(calls: list[dict], prepare: Callable[[str, str], Callable[[], str]],
              on_tool: Callable[[str, str], None]) -> list[dict]:
    """As the lesson's, through prepare (Calls.prepare): the first MAX_CALLS_PER_REPLY calls, their results
    within MAX_REPLY_RESULT_CHARS together; every call gets its message, run or not. Every question of the
    reply is asked first, in the model's order, before any call runs (a call that must meet another is never
    started before the other is allowed); then the calls run at once, each on a thread of its own and within
    its own deadline; results go back, and are shown, in the model's order. Ctrl-C at a question runs none;
    while they run, it cancels those still running too (their servers are told) before it ends the turn."""
    taken = calls[:MAX_CALLS_PER_REPLY]
    runs = [prepare(call["function"]["name"], call["function"]["arguments"] or "{}") for call in taken]
    results: list[str | None] = [None] * len(taken)
    done = [threading.Event() for _ in taken]
    cancel = Cancel()

    def run(i: int) -> None:
        try:
            results[i] = runs[i]()
        finally:
            done[i].set()

    def run_apart(i: int) -> None:
        try:
            cancel.run(lambda: run(i))
        except KeyboardInterrupt:  # cancelled with the turn: it has told its server, and the turn ends
            pass
    ran, room, started = [], MAX_REPLY_RESULT_CHARS, []
    try:
        for i in range(len(taken) if len(taken) > 1 else 0):
            started.append(i)  # first: a Ctrl-C inside start() may land once the thread runs
            threading.Thread(target=run_apart, args=(i,), name=f"tool-call-{i}", daemon=True).start()
        for i, call in enumerate(taken):
            if i not in started:
                run(i)
            while not done[i].wait(SIGNAL_CHECK_S):  # Ctrl-C is seen while the others run
                pass
            name, result = call["function"]["name"], results[i] or ""
            on_tool(name, result)
            ran.append({"role": "tool", "tool_call_id": call["id"], "content": _within(result, room)})
            room = max(0, room - len(result))
    except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or SIGTERM and SIGHUP as servers/exits.py leaves on them
        cancel.set()
        until = time.monotonic() + CANCEL_WAIT_S
        for i in started:
            done[i].wait(max(0.0, until - time.monotonic()))
        raise
    return ran + [{"role": "tool", "tool_call_id": call["id"], "content": NOT_RUN.format(limit=MAX_CALLS_PER_REPLY)}
                  for call in calls[MAX_CALLS_PER_REPLY:]]


def _within(result: str, room: int) -> str:
    """A result cut to what is left of the reply's room, with a note saying how to get the rest."""
    if len(result) <= room:
        return result
    note = (f"\n[... {len(result) - room:,} more characters cut: the results of one reply may add "
            f"{MAX_REPLY_RESULT_CHARS:,} characters; call again in a later reply for the rest (read: with an offset)]")
    return result[:room] + note
