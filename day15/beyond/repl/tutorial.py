"""Beyond the tutorial: --tutorial, the tutorial's own program (index.py's tutorial()) behind the folder's trust.

Run alone, the lesson starts whatever a cloned folder's mcp.json says. Here the folder's files are read
once and shown as the tutorial's client reads them (folder/trust.py); only once the user trusts them does
the program get them: private copies of the trusted bytes (mcp.json without its "disabled" entries, which
the tutorial's client would start anyway; GeekAgent.json) and the trusted .env's settings in the
environment. Not trusted: it runs with no server, and GeekAgent.json allows nothing. Then index.py's own
loop runs and reads the terminal itself, asking its y/N on stdin: what a reader changes there is what runs.
"""
import json
import os
import sys
import tempfile
from collections.abc import Callable

from beyond.console import Console
from beyond.folder.dotenv import load_dotenv
from beyond.folder.project import find_project
from beyond.folder.trust import MCP_CONFIG_PATH, Project, decide
from beyond.servers.exits import stop_on_signals
from beyond.wire.sandbox import keep_to_itself
from permissions import POLICY_PATH, PolicyError


def run(program: Callable[[str, str], int], trust_now: bool) -> int:
    """program(mcp.json's path, GeekAgent.json's path) once the folder's trust is decided; its exit status."""
    keep_to_itself()
    stop_on_signals()  # SIGTERM and SIGHUP leave through the program's finally: its servers are stopped
    find_project()  # as the full agent: the nearest .geekagent/ upward becomes the working folder
    project = Project.read(".", tutorial=True)
    console = Console()
    ask = (lambda question: console.confirm(question, always=False)) if console.terminal else None
    trusted = decide(project, trust_now, ask)
    if trusted:
        load_dotenv(settings=project.dotenv())
        try:
            project.policies()  # a policy file that is a link out, or broken: never ignored in silence
        except PolicyError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    with tempfile.TemporaryDirectory(prefix="geekagent-tutorial-") as folder:
        servers, policies = os.path.join(folder, "mcp.json"), os.path.join(folder, "GeekAgent.json")
        for path, data in ((servers, started(project.files[MCP_CONFIG_PATH]) if trusted else None),
                           (policies, project.files[POLICY_PATH] if trusted else None)):
            if data is not None:
                with open(path, "wb") as f:
                    f.write(data)
        return program(servers, policies)


def started(raw: bytes | None) -> bytes | None:
    """mcp.json's trusted bytes without the entries it marks "disabled" (as the question showed them); bytes
    the tutorial's client cannot read are left as they are, for it to say so."""
    try:
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (ValueError, RecursionError):
        return raw
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        return raw
    servers = {name: entry for name, entry in data["mcpServers"].items()
               if not (isinstance(entry, dict) and entry.get("disabled") is True)}
    return json.dumps({**data, "mcpServers": servers}).encode("utf-8")
