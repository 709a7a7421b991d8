"""Beyond the tutorial: the user's own folders (XDG), where answers, pins, logins and history live;
the bottom every part may use (it imports none of ours).
"""
import os


def config_dir() -> str:
    """$XDG_CONFIG_HOME/geekagent (default ~/.config/geekagent): what the user decided."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent")


def state_dir() -> str:
    """$XDG_STATE_HOME/geekagent (default ~/.local/state/geekagent): what the agent keeps for itself."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "geekagent")
