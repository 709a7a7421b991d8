"""Beyond the tutorial: the full agent's tools.run_tool. The same steps as the lesson's (find, parse,
policy, ask, run, every failure as text), with the answers of the user's Approvals (the console's
question, `a`lways, pins), a long result kept whole instead of cut (results.py), secrets masked in
what the model reads, and every call reported (the audit log; -p --json).
"""
import itertools
import json
import time
from collections.abc import Callable

import tools
from beyond.folder.approvals import Approvals
from beyond.secrets import mask
from beyond.servers import toolset
from beyond.text import shorten

DENIED = "Denied: the tool {name} is not allowed by the user's policy; do not retry it."


class Calls:
    """Runs the model's tool calls; `keep(name, text)` makes a result over tools.MAX_RESULT_CHARS fit, and
    each of `reports` gets report(name, arguments, decision, outcome, seconds, size, order) for every call (order:
    its place among the calls prepared, as the model asked for them; they may end in another)."""

    def __init__(self, approvals: Approvals | None = None,
                 keep: Callable[[str, str], str] = lambda name, text: tools.cut(text, tools.MAX_RESULT_CHARS)) -> None:
        self.approvals, self.keep = approvals or Approvals(), keep
        self.reports: list[Callable[..., None]] = []
        self._prepared = itertools.count()  # next() is atomic: calls of a reply may be prepared from threads

    def run(self, name: str, arguments_json: str) -> str:
        """One tool call: always text for the model, never an exception."""
        return self.prepare(name, arguments_json)()

    def prepare(self, name: str, arguments_json: str) -> Callable[[], str]:
        """Everything before a call runs: find the tool, parse, the policy, the user's question (a Gated tool's
        gate too). Returns what runs it: always text for the model, never an exception; each call reported once.
        The questions of one reply are all asked this way before any of its calls runs (model/reply_calls.py)."""
        began, decision, order = time.monotonic(), self.approvals.policy_for(name), next(self._prepared)

        def report(outcome: str, result: str) -> str:
            for each in self.reports:
                each(name, arguments_json, decision, outcome, time.monotonic() - began, len(result), order)
            return result
        try:
            tool, args = toolset.get(name), tools.parse_arguments(name, arguments_json)
            if tool is None or isinstance(args, str):  # the name is the model's: masked all the same
                result = args if tool else mask(f"Error: unknown tool {shorten(name, 100)!r}.")
                return lambda: report("error", result)
            decision = decision if decision == "deny" else self._decide(tool, args)
            if decision in ("deny", "asked-no"):
                result = DENIED.format(name=name) if decision == "deny" else self.approvals.declined(name)
                return lambda: report("cancelled", result)
            runs = tool.gate(args) if isinstance(tool, toolset.Gated) else lambda: tool.run(args)
        except (KeyboardInterrupt, SystemExit):
            report("cancelled", "")  # Ctrl-C at a question: nothing of the reply runs
            raise
        except Exception as e:  # any failure of any tool (its gate included) becomes text for the model
            result = tools.cut(mask(f"Error: {name} failed: {e}"), tools.MAX_RESULT_CHARS)
            return lambda: report("error", result)
        return lambda: self._run(name, runs, decision == "allow", report)

    def _run(self, name: str, runs: Callable[[], str], allowed: bool, report) -> str:
        """Run a call its questions allowed: the result masked, then kept whole if it is long."""
        outcome, result = "cancelled", ""
        try:
            if allowed:
                self.approvals.used(name)  # an allowed tool is pinned at its first use
            result = runs()
            result = mask(result)  # before it is cut or kept: no part of a secret is left on either side of a cut
            outcome, result = "ok", self.keep(name, result) if len(result) > tools.MAX_RESULT_CHARS else result
        except Exception as e:  # any failure of any tool becomes text for the model
            outcome, result = "error", tools.cut(mask(f"Error: {name} failed: {e}"), tools.MAX_RESULT_CHARS)
        finally:
            report(outcome, result)
        return result

    def _decide(self, tool: tools.Tool, args: dict) -> str:
        """What the approvals decide for this call: with the tool's own question if it has one."""
        if isinstance(tool, toolset.Asking):
            return self.approvals.decide(tool.name, *tool.question(args))
        return self.approvals.decide(tool.name, f"Run {tool.name} with {json.dumps(args, ensure_ascii=False)}?")
