"""Beyond the tutorial: the user's `a`lways answers and the pins of allowed tools, kept per folder in
the user's state ($XDG_STATE_HOME/geekagent/approvals.json), never in the folder.

The tutorial's GeekAgent.json is the hand-written policy file and stays so: the agent never writes
it. An allowed tool (by `a` or by GeekAgent.json) is pinned at its first use: a hash of its
description and input schema. A later run that finds it changed makes it ask again and says why, so
a server cannot change what an allowed tool claims to do between two runs.
"""
import json
import os
import threading

from beyond_folder import JsonStore, state_dir


def pin_of(info: dict) -> str:
    """What a tool says it is: its description and input schema, hashed."""
    import hashlib  # here, not at import: OpenSSL's start-up is a quarter of the client's import time
    said = json.dumps([info.get("description"), info.get("inputSchema")], sort_keys=True, default=str)
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()


class Approvals:
    """One folder's answers: tool name -> {"pin": hash or None, "always": true or false}."""

    def __init__(self, folder: str, path: str | None = None) -> None:
        self.folder = os.path.realpath(folder)
        self.store = JsonStore(path or os.path.join(state_dir(), "approvals.json"))
        kept = self.store.load().get(self.folder)
        kept = kept if isinstance(kept, dict) else {}
        # _lock guards _tools: the REPL answers and a server's tool-list change checks from another thread.
        self._tools = {name: entry for name, entry in kept.items() if isinstance(entry, dict)}
        self._lock = threading.Lock()

    def always(self, name: str, pin: str | None = None) -> bool:
        """True when the user answered `a` for this tool and it still says what it said then."""
        with self._lock:
            entry = self._tools.get(name, {})
        return entry.get("always") is True and entry.get("pin") == pin

    def changed(self, name: str, pin: str) -> bool:
        """True when the tool was allowed and pinned once and now says something else."""
        with self._lock:
            kept = self._tools.get(name, {}).get("pin")
        return kept is not None and kept != pin

    def used(self, name: str, pin: str) -> None:
        """An allowed tool ran: pin it, unless it is pinned already."""
        with self._lock:
            if self._tools.get(name, {}).get("pin") is not None:
                return
        self._keep(name, {"pin": pin, "always": False})

    def remember(self, name: str, pin: str | None) -> str:
        """The user answered `a`: allow this tool as it is now in later runs too. Returns where it is kept."""
        self._keep(name, {"pin": pin, "always": True})
        return f"kept in {self.store.path}"

    def _keep(self, name: str, entry: dict) -> None:
        with self._lock:
            self._tools[name] = entry
            tools = dict(self._tools)
        self.store.update(self.folder, tools)
