"""Beyond the tutorial: the user's own folders (XDG), where answers, pins, logins and history live,
and `${VAR}` from the user's environment; the bottom every part may use (it imports none of ours).
"""
import os
import re

# ${VAR} or ${VAR:-default}, as in shells and in Claude Code's configs; ${env:VAR}, as VS Code writes it.
VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UnsetVariable(ValueError):
    """A ${VAR} with no value and no default; the message says where, and what to do."""


def config_dir() -> str:
    """$XDG_CONFIG_HOME/geekagent (default ~/.config/geekagent): what the user decided."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent")


def state_dir() -> str:
    """$XDG_STATE_HOME/geekagent (default ~/.local/state/geekagent): what the agent keeps for itself."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "geekagent")


def expand(text: str, where: str) -> str:
    """${VAR} and ${VAR:-default} from the agent's environment; a missing VAR is UnsetVariable."""
    def value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise UnsetVariable(f"{where}: ${{{name}}} is not set; set it in the environment or .env, "
                            f"or write ${{{name}:-default}}")
    return VARIABLE.sub(value, text)
