"""Beyond the tutorial: the servers follow the two mcp.json files in a running session.

/mcp reload reads both files again and reconciles: an entry added starts (behind the folder's trust question
when the folder's file changed), one removed stops, leaving no process, one changed restarts, one unchanged
keeps its session. /mcp enable NAME and /mcp disable NAME start or stop one server and write "disabled"
into its file (folder/mcp_files.py); a project entry enabled asks the trust question before it starts. When either
file changes on disk, the next prompt says so, once.
"""
import dataclasses
import os

from beyond.client.config import load_mcp_config
from beyond.folder.mcp_files import ConfigFileError, servers_to_start, user_config_path, user_file
from beyond.repl.verbs import lookup_files
from beyond.folder.trust import Project, decide, reaffirm
from beyond.terminal import shown
from mcp import McpError


class Watch:
    """The two files as last applied: changed() is True once after either changes on disk."""

    def __init__(self) -> None:
        self.paths = [project_file_path(), user_file().path]
        self.seen = self._now()
        self.said = False

    def _now(self) -> list:
        found = []
        for path in self.paths:
            try:
                info = os.stat(path)
                found.append((info.st_mtime_ns, info.st_size, info.st_ino))
            except OSError:
                found.append(None)
        return found

    def changed(self) -> bool:
        if self.said or self._now() == self.seen:
            return False
        self.said = True
        return True

    def applied(self) -> None:
        self.seen, self.said = self._now(), False


def project_file_path() -> str:
    """The folder's mcp.json: the session runs in the project folder (or where it began, without one)."""
    return os.path.abspath(os.path.join(".geekagent", "mcp.json"))


def reload(session) -> None:
    """/mcp reload"""
    agent, servers = session.agent, session.servers
    configs, frozen, unread = _configs(session)
    running = servers.configs()
    # A folder not trusted, or a file that cannot be read (a typo mid-edit): what runs of it keeps running.
    configs = {**{name: config for name, config in running.items()
                  if ("project" if config.folder_entry else "user") in frozen}, **configs}
    added = [name for name in configs if name not in running]
    removed = [name for name in running if name not in configs]
    changed = [name for name in configs if name in running and configs[name] != running[name]]
    for name in removed + changed:
        servers.drop(name)
    if added or changed:
        servers.connect_mcp_servers(configs={name: configs[name] for name in added + changed},
                                    echo=agent.options.verbose,
                                    on_ready=lambda status: print("  " + session.status_line(status)))
    session.watch.applied()
    said = [f"{what} {', '.join(shown(name, one_line=True) for name in names)}" for what, names in
            (("added", added), ("removed", removed), ("restarted", changed)) if names]
    broken = [path for scope, path in (("project", project_file_path()), ("user", user_file().path))
              if scope in unread and os.path.exists(path)]
    if broken:  # a file that cannot be read (a typo mid-edit): said so, and what it started keeps running
        print(f"{', '.join(shown(p, one_line=True) for p in broken)} cannot be read (the error above says where): "
              "what it started keeps running as it was; fix it, then /mcp reload")
    print("mcp.json reloaded: " + ("; ".join(said) if said else "nothing changed")
          + (f"; {kept} unchanged" if (kept := len(configs) - len(added) - len(changed)) else ""))


def _configs(session, again: tuple[str, object] | None = None) -> tuple[dict, set[str], set[str]]:
    """The entries to run now, both files read again (the folder's only when it is trusted: asked if it changed),
    the scopes whose entries cannot be taken from their file now ("project", "user"), and of those the ones
    whose file cannot be read. `again`: (name, its entry as this session disabled it): enabled unchanged, the
    folder's trust stands without a question."""
    agent = session.agent
    project = Project.read(".", sandbox=agent.options.sandbox)
    console = session.console
    ask = (lambda question: console.confirm(question, always=False)) if console.terminal else None
    if again and _only_enabled(project, *again):
        reaffirm(project, again[0])  # what the user trusted, the entry enabled again as it was: nothing to ask
    trusted = decide(project, agent.options.trust, ask)
    agent.skills.use_folder(project, trusted)  # the folder's skills follow its trust too
    configs, _ = servers_to_start(project if trusted else None, sandbox=agent.options.sandbox)
    unread = set()
    for scope, load in (("project", project.servers), ("user", lambda: load_mcp_config(user_config_path()))):
        try:
            load()
        except McpError:
            unread.add(scope)
    return configs, unread | ({"project"} if not trusted else set()), unread


def switch(session, name: str, enable: bool) -> None:
    """/mcp enable NAME, /mcp disable NAME: for this session, and in the file that holds the entry."""
    files = [file for file in lookup_files() if name in _entries(file)]  # the one that runs first
    if not files:
        print(f"no server named {shown(name, one_line=True)} in either mcp.json; /mcp lists them")
        return
    file = files[0]

    def flip(servers: dict) -> None:
        if isinstance(servers.get(name), dict):
            if enable:
                servers[name].pop("disabled", None)
            else:
                servers[name]["disabled"] = True
    was = session.servers.configs().get(name)
    file.edit(flip)
    if not enable:
        configs, _, _ = _configs(session)  # fewer servers: nothing is asked, and the trust kept says it is off
        session.servers.drop(name, disabled=configs.get(name) or (dataclasses.replace(was, disabled=True)
                                                                    if was else None))
        session.watch.applied()
        print(f"{shown(name, one_line=True)} stopped, and disabled in {file.shown}")
        return
    configs, frozen, _ = _configs(session, again=_disabled_here(session, name))
    session.watch.applied()
    if name not in configs:
        print(f"{shown(name, one_line=True)} is enabled in {file.shown}, and not started: "
              + ("the folder is not trusted" if file.scope in frozen else "its entry has a problem (/mcp lists it)"))
        return
    session.servers.drop(name)
    session.servers.connect_mcp_servers(configs={name: configs[name]}, echo=session.agent.options.verbose,
                                        on_ready=lambda status: print("  " + session.status_line(status)))


def _disabled_here(session, name: str) -> tuple[str, object] | None:
    """(name, its entry) when this session disabled it (/mcp disable), else None."""
    config = session.servers.configs().get(name)
    return (name, config) if session.servers.disabled_here(name) and config is not None else None


def _only_enabled(project, name: str, was) -> bool:
    """Whether the folder's entry `name` is now what it was when disabled, but enabled."""
    try:
        now = project.servers().get(name)
    except McpError:
        return False
    return now is not None and not now.disabled and dataclasses.replace(now, disabled=True) == was


def _entries(file) -> dict:
    try:
        return file.entries()
    except ConfigFileError as e:
        print(f"error: {shown(str(e), one_line=True)}")
        return {}
