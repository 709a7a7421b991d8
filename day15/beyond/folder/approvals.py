"""Beyond the tutorial: the full agent's side of permissions.py. Every "Allow?" goes through one
`confirm` (the console's: masked, one question at a time), and an `a`lways answer allows the tool from
then on; decide() returns what was decided, for the audit. The answers and the pins of allowed tools
are kept per folder in the user's state ($XDG_STATE_HOME/geekagent/approvals.json), never in the folder.

The tutorial's GeekAgent.json is the hand-written policy file and stays so: the agent never writes
it. An allowed tool (by `a` or by GeekAgent.json) is pinned at its first use: a hash of its
description and input schema. A tool that says something else than it did, later in this run or in
a later run than the one that pinned it, asks again, so a server cannot change what an allowed tool
claims to do. Without a folder (scripts, tests) the answers last for the run.
"""
import hashlib
import json
import os
import threading
from collections.abc import Callable

import permissions
import tools
from beyond.dirs import UnsetVariable, expand, state_dir
from beyond.folder.project import JsonStore
from beyond.secrets import mask
from beyond.wire.sandbox import what_it_may


# The full agent's policy table: the lesson's defaults, GeekAgent.json's policies as the trust question
# checked them (load_policies), and the defaults the agent's tools were registered with since (ensure).
POLICIES: dict[str, str] = dict(permissions.DEFAULT_POLICIES)


def load_policies(policies: dict[str, str]) -> None:
    """The table for this run: the defaults, then `policies` (checked already)."""
    POLICIES.clear()
    POLICIES.update({**permissions.DEFAULT_POLICIES, **policies})


def policy_for(name: str) -> str:
    """The tool's policy in the table; a tool nobody gave one is denied."""
    return POLICIES.get(name, "deny")


def ensure(name: str, default: str) -> None:
    """Give a tool a policy only if none is given (GeekAgent.json's wins), as permissions.py does."""
    POLICIES.setdefault(name, default)  # one dict operation: atomic under the GIL


def forget_answers(folder: str) -> bool:
    """The `a` answers and pins kept for a folder (its tools' and its skills'), forgotten; whether any were."""
    real = os.path.realpath(folder)
    return any([JsonStore(os.path.join(state_dir(), name)).forget(real)
                for name in ("approvals.json", "skill-approvals.json")])


def pin_of(info: dict) -> str:
    """What a tool says it is: its description and input schema, hashed."""
    return _hashed([info.get("description"), info.get("inputSchema")])


def runs_of(config) -> dict[str, str]:
    """What decides what a server runs and where, each part hashed: the transport, and the program (command,
    args, cwd, env names and values, ${VAR} expanded as at start, and a sandbox's grants) or the URL it
    connects to."""
    if config.kind == "stdio":
        parts = {"command": config.command, "args": config.args, "cwd": config.cwd, "env": config.env}
        parts.update({"sandbox": what_it_may(config)} if config.sandbox is not None else {})
    else:
        parts = {"url": config.url}
    return {"transport": config.kind, **{part: _hashed(_expanded(value)) for part, value in parts.items()}}


def what_changed(then: object, now: object) -> list[str]:
    """The parts of runs_of that differ between `then` (as kept) and `now`; [] when nothing is known to differ."""
    if then is None or now is None or then == now:
        return []
    if not isinstance(then, dict) or not isinstance(now, dict):
        return ["entry"]  # kept in an older form: what changed is not known
    return sorted(part for part in then.keys() | now.keys() if then.get(part) != now.get(part))


def _expanded(value: object) -> object:
    """${VAR} expanded in a string, or in each string of a list or a dict's values (as the server gets them)."""
    if isinstance(value, str):
        try:
            return expand(value, "")
        except UnsetVariable:
            return value  # the server does not start; what was written is what changed
    if isinstance(value, list):
        return [_expanded(item) for item in value]
    return {key: _expanded(item) for key, item in value.items()} if isinstance(value, dict) else value


def _hashed(value: object) -> str:
    said = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()


def ask_on_stdin(prompt: str, always: bool = True) -> bool | str:
    """Without a console (scripts): the lesson's y/N question."""
    return permissions.ask_on_stdin(prompt)


class Approvals:
    """One folder's answers: tool name -> {"pin": hash or None, "always": true or false, "runs": what its
    server ran when it was allowed}, and what each tool said (and its server ran) when this run first
    registered it. `confirm(prompt)` asks the user (True, False or "always"); a call that is not allowed
    tells the model `declined`."""

    def __init__(self, folder: str | None = None, path: str | None = None,
                 confirm: Callable[[str], bool | str] = ask_on_stdin, declined: str = tools.DECLINED) -> None:
        self.confirm, self.declined_text = confirm, declined
        self.folder = os.path.realpath(folder) if folder else None
        self.store = JsonStore(path or os.path.join(state_dir(), "approvals.json")) if folder else None
        kept = self.store.load().get(self.folder) if self.store else None
        kept = kept if isinstance(kept, dict) else {}
        # _lock guards _tools, _said, _runs, _policies and _granted: the REPL answers while a server's tool-list
        # change registers tools on another thread.
        self._tools = {name: entry for name, entry in kept.items() if isinstance(entry, dict)}
        self._said: dict[str, str] = {}
        self._runs: dict[str, dict | None] = {}
        self._policies: dict[str, str] = {}  # this run's answers, over the table's (POLICIES)
        self._granted: set[str] = set()  # tools the user granted to a skill this run (allow_for_run)
        self._lock = threading.Lock()

    # --- the question ----------------------------------------------------------------------

    def policy_for(self, name: str) -> str:
        """The tool's policy now: as this run's answers changed it, else as the table has it (POLICIES); a
        tool nobody gave a policy is denied."""
        with self._lock:
            changed = self._policies.get(name)
        return changed or policy_for(name)

    def decide(self, name: str, prompt: str, whatever_the_policy: bool = False) -> str:
        """allow or deny as the policy says, without asking; for ask, the user's answer to `prompt` (masked):
        asked-yes or asked-no, and an "always" allows `name` from now on. With `whatever_the_policy` (a
        secret-looking file) an allowed tool is asked too, and no `a` is offered."""
        policy = self.policy_for(name)
        if policy == "deny" or (policy == "allow" and not whatever_the_policy):
            return policy
        answer = self.confirm(mask(prompt), always=not whatever_the_policy)
        if answer == "always":
            self._set(name, "allow")
            print(f"{name} is now allowed without asking ({self.remember(name)}).")
        return "asked-yes" if answer else "asked-no"

    def declined(self, name: str) -> str:
        """The text for the model when `name` was not allowed to run."""
        return self.declined_text.format(name=name)

    def allow_for_run(self, name: str) -> None:
        """The user let a tool run without asking for the rest of this run (a skill's allowed-tools, granted:
        asked no more while skills are loaded); a tool the policy denies stays denied."""
        if policy_for(name) != "deny":
            self._set(name, "allow")
            with self._lock:
                self._granted.add(name)

    def granted(self, name: str) -> bool:
        """Whether the user granted this tool to a loaded skill (allow_for_run)."""
        with self._lock:
            return name in self._granted

    def ask_again(self, name: str) -> None:
        """An allowed tool changed: it asks before every call from now on in this run."""
        self._set(name, "ask")

    def _set(self, name: str, policy: str) -> None:
        with self._lock:
            self._policies[name] = policy

    # --- the answers kept ------------------------------------------------------------------

    def review(self, name: str, info: dict | None, runs: dict | None = None) -> str | None:
        """A tool is registered (info None: one whose description is ours, with nothing to pin), its
        server running `runs` (runs_of). An `a` for it as it is now, from a server that runs what it ran
        then, allows it. For an allowed tool that changed, the return says what changed and why it
        must ask now (a clause after the tool's name); else None."""
        pin = pin_of(info) if info is not None else None
        with self._lock:
            earlier = self._said.setdefault(name, pin) if pin else None
            if pin:
                self._said[name] = pin
            self._runs[name] = runs
            kept = self._tools.get(name, {})
        moved = what_changed(kept.get("runs"), runs) if kept.get("always") is True else []
        if kept.get("always") is True and kept.get("pin") == pin and not moved:
            self._set(name, "allow")  # `a` in an earlier run, for the tool as it was then
        if moved and self.policy_for(name) != "deny":
            return (f"is asked again since it was allowed: its entry's {', '.join(moved)} changed since then; "
                    "it asks before every call until you allow it again")
        changed = "changed its description or input schema since it was allowed"
        if earlier != pin and self.policy_for(name) == "allow":
            return f"{changed}; it asks before every call for the rest of this session"
        if earlier == pin and kept.get("pin") not in (None, pin) and self.policy_for(name) != "deny":
            return f"{changed} in an earlier run; it asks before every call until you allow it again"
        return None

    def used(self, name: str) -> None:
        """An allowed tool ran: pin it as it is now, unless it is pinned already."""
        with self._lock:
            pin, pinned = self._said.get(name), self._tools.get(name, {}).get("pin") is not None
        if pin and not pinned:
            self._keep(name, {"pin": pin, "always": False, "runs": self._runs.get(name)})

    def remember(self, name: str) -> str:
        """The user answered `a`: allow this tool as it is now in later runs too. Returns where it is kept."""
        with self._lock:
            pin, runs = self._said.get(name), self._runs.get(name)
        if self._keep(name, {"pin": pin, "always": True, "runs": runs}) and self.store:
            return f"kept in {self.store.path}"
        return "for the rest of this session"

    def always(self, name: str) -> bool:
        """Whether the user answered `a` for this tool (in this folder, in this run or an earlier one)."""
        with self._lock:
            return self._tools.get(name, {}).get("always") is True

    def new_run(self) -> None:
        """Every server stopped: what the tools said is forgotten with them (and, without a folder to
        keep them in, the answers of the run too)."""
        with self._lock:
            self._said.clear()
            self._runs.clear()
            if self.store is None:
                self._tools.clear()

    def _keep(self, name: str, entry: dict) -> bool:
        """Keep this tool's answer (for the run; in the folder's store, if any: whether that was written)."""
        with self._lock:
            self._tools[name] = entry
        if self.store:  # this tool's entry, into what another agent in this folder may have kept meanwhile
            return self.store.edit(self.folder, lambda kept: {**(kept if isinstance(kept, dict) else {}), name: entry})
        return False
