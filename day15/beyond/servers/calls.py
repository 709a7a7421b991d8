"""Beyond the tutorial: the full agent's tools.run_tool. The same steps as the lesson's (find, parse,
policy, ask, run, every failure as text), with the answers of the user's Approvals (the console's
question, `a`lways, pins), a long result kept whole instead of cut (results.py), secrets masked in
what the model reads, and every call reported (the audit log; -p --json).
"""
import json
import time
from collections.abc import Callable

import tools
from beyond.folder.approvals import Approvals
from beyond.servers import toolset
from beyond.text import mask_secrets


class Calls:
    """Runs the model's tool calls; `keep(name, text)` makes a result over tools.MAX_RESULT_CHARS fit, and
    each of `reports` gets report(name, arguments, decision, outcome, seconds, size) for every call."""

    def __init__(self, approvals: Approvals | None = None,
                 keep: Callable[[str, str], str] = lambda name, text: tools.cut(text, tools.MAX_RESULT_CHARS)) -> None:
        self.approvals, self.keep = approvals or Approvals(), keep
        self.reports: list[Callable[..., None]] = []

    def run(self, name: str, arguments_json: str) -> str:
        """One tool call: always text for the model, never an exception."""
        began, outcome, result = time.monotonic(), "cancelled", ""
        self.approvals.last_decision(clear=True)
        try:
            result, outcome = self._run(name, arguments_json)
            return result
        finally:
            decision = self.approvals.last_decision() or self.approvals.policy_for(name)
            for report in self.reports:
                report(name, arguments_json, decision, outcome, time.monotonic() - began, len(result))

    def _run(self, name: str, arguments_json: str) -> tuple[str, str]:
        """(the text for the model, the outcome: ok, error or cancelled)."""
        tool = toolset.get(name)
        if tool is None:
            return f"Error: unknown tool {name[:100]!r}.", "error"
        args = tools.parse_arguments(name, arguments_json)
        if isinstance(args, str):
            return args, "error"
        if self.approvals.policy_for(name) == "deny":
            self.approvals.authorize(name, "")  # records the decision: deny, never asked
            return f"Denied: the tool {name} is not allowed by the user's policy; do not retry it.", "cancelled"
        prompt = f"Run {name} with {json.dumps(args, ensure_ascii=False)}?"
        if not tool.authorizes and not self.approvals.authorize(name, prompt):
            return self.approvals.declined(name), "cancelled"
        try:
            result = tool.run(args)
        except Exception as e:  # any failure of any tool becomes text for the model
            return mask_secrets(tools.cut(f"Error: {name} failed: {e}", tools.MAX_RESULT_CHARS)), "error"
        outcome = "cancelled" if self.approvals.last_decision() == "asked-no" else "ok"
        if len(result) > tools.MAX_RESULT_CHARS:
            result = self.keep(name, result)
        return mask_secrets(result), outcome
