"""Beyond the tutorial: the tasks a folder's tool calls became (client/tasks.py) whose outcome was not
delivered yet, kept in the user's state ($XDG_STATE_HOME/geekagent/tasks.json), never in the folder.

A task is written when the server creates it, before the first poll, and forgotten once its outcome
reached the model, or /tasks showed it (repl/tasks.py). So an agent killed during a task loses
nothing: the next start in the same folder lists it. Without a folder (scripts) they last for the run.
"""
import hashlib
import json
import os
import threading
import time

from beyond.dirs import state_dir
from beyond.folder.approvals import runs_of
from beyond.folder.project import JsonStore

# Kept per folder at most; past it the oldest is forgotten.
MAX_KEPT = 100


def identity(config) -> str:
    """What a server is, beyond its name: runs_of (folder/approvals.py: its program, args, cwd and env, or
    its URL), hashed; a task is asked of the server that created it, never of another under its name."""
    return hashlib.sha256(json.dumps(runs_of(config), sort_keys=True).encode()).hexdigest()[:16]


class TaskLog:
    """One folder's tasks, each under its server's identity and its id: {"server", "tool", "id",
    "identity", "created" (seconds since the epoch)}."""

    def __init__(self, folder: str | None = None, path: str | None = None) -> None:
        self.folder = os.path.realpath(folder) if folder else None
        self.store = JsonStore(path or os.path.join(state_dir(), "tasks.json")) if folder else None
        self._run: dict[str, dict] = {}  # without a folder
        self._lock = threading.Lock()  # one change at a time: a reply's calls run side by side, beside /tasks

    def created(self, server: str, tool: str, task_id: str, config) -> None:
        entry = {"server": server, "tool": tool, "id": task_id, "identity": identity(config), "created": time.time()}
        self._change(lambda tasks: dict(sorted({**tasks, _key(entry): entry}.items(),
                                               key=lambda item: item[1]["created"])[-MAX_KEPT:]))

    def delivered(self, task_id: str, config) -> None:
        self.forget(_key({"identity": identity(config), "id": task_id}))

    def forget(self, key: str) -> None:
        self._change(lambda tasks: {k: entry for k, entry in tasks.items() if k != key})

    def pending(self) -> dict[str, dict]:
        """This folder's tasks by key (its server's identity and its id), oldest first."""
        with self._lock:
            return self._load()

    def _load(self) -> dict[str, dict]:
        return dict(self._run) if self.store is None else _valid(self.store.load().get(self.folder))

    def _change(self, change) -> None:
        """The folder's tasks as change(them) makes them: read and written under the store's lock, so what
        another agent keeps meanwhile stays."""
        with self._lock:
            if self.store is None:
                self._run = change(dict(self._run))
            else:
                self.store.edit(self.folder, lambda kept: change(_valid(kept)))


def _key(entry: dict) -> str:
    return f"{entry['identity']}/{entry['id']}"


def _valid(kept: object) -> dict[str, dict]:
    """The records of a folder's tasks as kept, those of the right shape (an older record, named by its id
    alone, has no identity to be asked by: it is left out)."""
    kept = kept if isinstance(kept, dict) else {}
    return {key: entry for key, entry in kept.items() if isinstance(entry, dict)
            and all(isinstance(entry.get(k), str) for k in ("server", "tool", "id", "identity"))
            and isinstance(entry.get("created"), (int, float)) and key == _key(entry)}
