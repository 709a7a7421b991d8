"""Beyond the tutorial: one prompt run to its end without a terminal, for scripts and CI.

`beyond_agent.py -p "prompt"` (or `-p -`: the prompt from stdin) starts as the REPL does (the folder's
trust included: without --trust an untrusted folder's servers do not start), then runs one
conversation and leaves. Nobody is asked anything: a tool runs only if GeekAgent.json (or an
earlier `a`) allows it; an `ask` tool is refused with a note the model reads, and what servers ask
is declined (asks/handlers.py). The answer alone goes to stdout, everything else to stderr; with
`--json`, one object: {"answer", "tool_calls": [{"name", "arguments", "outcome"}], "usage"}, also
when Ctrl-C or a signal ends the run. An @server:uri in the prompt is attached as in the REPL. Exit
status: 0 answered, 1 the model or the run failed, 2 a usage error (beyond_agent.py), 130 Ctrl-C, 128+N signal N.
"""
import json
import signal
import sys

import chat
from beyond.model.hints import missing_key_hint
from beyond.repl.resources import attach_mentions
from beyond.secrets import mask, mask_data
from beyond.terminal import shown

# A tool line on stderr shows this much of the result, as the REPL's does.
TOOL_LINE_CHARS = 80
# What -p --json says a call came to, by what was decided for it (the decision Calls reports).
OUTCOMES = {"asked-no": "refused", "deny": "denied"}


def run(session, prompt: str, as_json: bool, out) -> int:
    """One conversation to its end; the answer (or the JSON object) on `out`; the exit status."""
    hint = missing_key_hint(repl=False)
    if hint:
        print(f"error: {hint}", file=sys.stderr)
        return 1
    calls, usage = [], {"prompt_tokens": 0, "completion_tokens": 0}

    def record(name, arguments_json, decision, outcome, seconds, size, order):
        try:
            arguments = mask_data(json.loads(arguments_json or "{}"))
        except (ValueError, RecursionError):
            arguments = mask(arguments_json)
        call = {"name": mask(name), "arguments": arguments, "outcome": OUTCOMES.get(decision, outcome)}
        if decision == "allow" and outcome == "ok":  # GeekAgent.json, the user's own `a`, or the agent's default
            call["allowed_by"] = "GeekAgent.json" if session.agent.policies.get(name) == "allow" else \
                "a" if session.agent.approvals.always(name) else "default"
        calls.append((order, call))

    def count(reply_usage: dict) -> None:
        for key in usage:
            usage[key] += reply_usage.get(key) if type(reply_usage.get(key)) is int else 0
    session.agent.calls.reports.append(record)  # beside the audit log's
    output, answer, error, status = session.console.output(TOOL_LINE_CHARS), None, None, 1  # tool lines: stderr
    try:
        prompt = attach_mentions(session, prompt)  # @server:uri, as in the REPL
        answer = session.agent.chat.run_turn(session.history, prompt, on_tool=output.tool, on_usage=count)
        if answer == f"({chat.STOPPED.format(rounds=chat.MAX_ROUNDS)})":
            answer, error = None, chat.STOPPED.format(rounds=chat.MAX_ROUNDS)
    except chat.ChatError as e:
        error = str(e)
    except KeyboardInterrupt:  # its calls were cancelled (their servers told): what ran is still reported
        error, status = "cancelled (Ctrl-C)", 130
    except SystemExit as e:  # SIGTERM or SIGHUP (servers/exits.py exits with 128 + its number): reported alike
        error, status = f"stopped by {_signal_name(e.code)}", e.code
    answer = None if answer is None else mask(answer)  # a key the model repeats is never printed
    if error:
        print(f"error: {shown(error, one_line=True)}", file=sys.stderr)
    if as_json:
        result = {"answer": answer, "tool_calls": [call for _, call in sorted(calls, key=lambda c: c[0])],
                  "usage": usage}  # in the model's order, however they ended
        result |= {"error": mask(error)} if error else {}
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif answer is not None:
        out.write((shown(answer) if out.isatty() else answer) + "\n")  # a terminal gets no escapes from the model
    out.flush()
    return status if error else 0


def _signal_name(status: object) -> str:
    """SIGTERM for 143: the signal an exit status of 128 + N says ended the run."""
    try:
        return signal.Signals(status - 128).name
    except (TypeError, ValueError):
        return f"a signal (exit status {status})"
