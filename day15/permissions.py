"""Tool permissions: allow, ask or deny per tool (tutorial Day 8; Day 15 sections 3.4 and 5).

Owns the policy table read from .geekagent/GeekAgent.json and the yes/no question.
The registry (tools.py) and the MCP adapter (mcp.py) call authorize(); nothing here runs a tool.
"""
import json

POLICY_PATH = ".geekagent/GeekAgent.json"
POLICIES = ("allow", "ask", "deny")

# Read-only built-ins are safe to run unasked; everything else must be configured or ensured.
DEFAULT_POLICIES = {"get_current_time": "allow", "ls": "allow", "read": "allow"}

_policies: dict[str, str] = dict(DEFAULT_POLICIES)


class PolicyError(Exception):
    """The policy file cannot be used; the message names the file and the key to fix."""


def load_policies(path: str = POLICY_PATH) -> dict[str, str]:
    """Overlay the file's policies on the defaults; no file keeps the defaults. The whole file is
    checked before any of it takes effect, so a typo never widens access."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError, RecursionError) as e:
        raise PolicyError(f"{path}: cannot read it: {e}") from None
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: the top level must be a JSON object")
    tools = data.get("tools", {})
    if not isinstance(tools, dict):
        raise PolicyError(f'{path}: "tools" must be an object of tool name -> allow/ask/deny')
    for name, value in tools.items():
        if value not in POLICIES:
            raise PolicyError(f'{path}: tools.{name} must be "allow", "ask" or "deny", '
                              f'not {value!r}')
    _policies.clear()
    _policies.update({**DEFAULT_POLICIES, **tools})
    return dict(_policies)


def ensure_tool_policy(name: str, default: str) -> None:
    """Give a tool a policy only if none is configured (GeekAgent.json wins)."""
    _policies.setdefault(name, default)


def policy_for(name: str) -> str:
    """The tool's policy; a tool nobody configured or ensured is denied."""
    return _policies.get(name, "deny")


def ask_on_stdin(prompt: str) -> bool:
    """The y/N question on stdin: y or yes runs it; anything else, Enter or end of input is no."""
    try:
        return input(f"{prompt} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        print()  # Ctrl-D: the "no" goes on a line of its own
        return False


def authorize(name: str, prompt: str) -> bool:
    """allow -> True, deny -> False, both without asking; ask -> whatever the user answers."""
    policy = policy_for(name)
    if policy != "ask":
        return policy == "allow"
    return ask_on_stdin(prompt)
