"""Shared test set-up: day15/ on the import path, a clean registry per test, process helpers."""
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DAY15 = ROOT / "day15"
FAKES = ROOT / "tests" / "fakes"
sys.path.insert(0, str(DAY15))
sys.path.insert(0, str(ROOT / "tests"))

import mcp  # after the path insert above
import permissions
import tools


@pytest.fixture(autouse=True)
def clean_state():
    """Every test starts with an empty registry, default policies and no servers."""
    tools._registry.clear()
    permissions._policies.clear()
    permissions._policies.update(permissions.DEFAULT_POLICIES)
    permissions.set_confirm(permissions.ask_on_stdin)
    yield
    mcp.stop_mcp_servers()
    tools._registry.clear()


def fake(mode: str, arg: str = "", **extra) -> dict:
    """An mcpServers entry that runs the scripted fake server in `mode`."""
    args = [str(FAKES / "fake_server.py"), mode] + ([arg] if arg else [])
    return {"command": sys.executable, "args": args, **extra}


def demo() -> dict:
    return {"command": sys.executable, "args": [str(DAY15 / "demo_server.py")]}


def group_alive(pgid: int) -> bool:
    """True while any process of the group runs; zombies (which nobody here reaps) do not count."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(stat[2]) == pgid and stat[0] != b"Z":
            return True
    return False


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"
