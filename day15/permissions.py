"""Tool permissions: allow, ask or deny per tool (tutorial Day 8, used by Day 15 section 4.1).

Owns the policy table read from .geekagent/GeekAgent.json and the yes/no question.
The registry (tools.py) and the MCP adapter (mcp.py) call authorize(); nothing here runs a tool.
"""
import json
import os

POLICY_PATH = ".geekagent/GeekAgent.json"
POLICIES = ("allow", "ask", "deny")

# Read-only built-ins are safe to run unasked; everything else must be configured or ensured.
DEFAULT_POLICIES = {"get_current_time": "allow", "ls": "allow", "read": "allow"}

_policies: dict[str, str] = dict(DEFAULT_POLICIES)


class PolicyError(Exception):
    """The policy file cannot be used; the message names the file and the key to fix."""


def parse_json(path: str) -> object:
    """A config file's JSON, or None when there is no such file; ValueError naming the file otherwise."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: {e}") from None
    return decode_json(path, raw)


def decode_json(path: str, raw: bytes) -> object:
    """The JSON in a file's bytes; ValueError naming the file, the line and the column where it is wrong."""
    try:
        return json.loads(raw.decode("utf-8-sig"))  # a byte order mark, as some editors write, is fine
    except json.JSONDecodeError as e:  # where, in an editor's terms, and the commonest cause by name
        before = e.doc[:e.pos].rstrip()
        comma = before.endswith(",") and e.msg.startswith(("Expecting property name", "Expecting value"))
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: line {e.lineno}, column {e.colno}: "
                         f"{e.msg}" + (" (a trailing comma?)" if comma else "")) from None
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: {e}") from None


def parse_policies(path: str = POLICY_PATH) -> dict[str, str]:
    """The file's tool policies, all checked; a missing file has none."""
    try:
        data = parse_json(path)
    except ValueError as e:
        raise PolicyError(str(e)) from None
    return checked_policies(path, {} if data is None else data)


def load_policies(path: str = POLICY_PATH, policies: dict[str, str] | None = None) -> dict[str, str]:
    """Overlay the file's policies (or `policies`, as already parsed) on the defaults; no file keeps the defaults."""
    policies = parse_policies(path) if policies is None else policies
    _policies.clear()
    _policies.update(DEFAULT_POLICIES)
    _policies.update(policies)
    return dict(_policies)


def checked_policies(path: str, data: object) -> dict[str, str]:
    """Validate the whole file before any of it takes effect, so a typo never widens access."""
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: the top level must be a JSON object")
    tools = data.get("tools", {})
    if not isinstance(tools, dict):
        raise PolicyError(f"{path}: \"tools\" must be an object of tool name -> allow/ask/deny")
    for name, value in tools.items():
        if value not in POLICIES:
            raise PolicyError(f"{path}: tools.{name} must be \"allow\", \"ask\" or \"deny\", not {value!r}")
    return tools


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
