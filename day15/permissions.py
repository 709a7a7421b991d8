"""Tool permissions: allow, ask or deny per tool (tutorial Day 8, used by Day 15 section 4.1).

Owns the policy table read from .geekagent/GeekAgent.json and the yes/no question.
The registry (tools.py) and the MCP adapter (mcp.py) call authorize(); nothing here runs a tool.
"""
import json
import os
import re
import threading
from collections.abc import Callable

POLICY_PATH = ".geekagent/GeekAgent.json"
POLICIES = ("allow", "ask", "deny")

# Read-only built-ins are safe to run unasked; everything else must be configured or ensured.
DEFAULT_POLICIES = {"get_current_time": "allow", "ls": "allow", "read": "allow"}

# Environment variables whose names contain one of these hold secrets and are never shown.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
# Shorter values would mask ordinary words and digits all over the output.
MIN_SECRET_LEN = 8
# What local endpoints take as a key (Ollama, LM Studio, vLLM) and what examples write: words, not secrets.
PLACEHOLDER_KEYS = {"none", "null", "empty", "test", "dummy", "fake", "placeholder", "changeme", "ollama", "lm-studio",
                    "lmstudio", "no-key", "nokey", "not-needed", "sk-no-key-required", "sk-xxx", "sk-test", "sk-dummy",
                    "sk-1234", "sk-placeholder"}

_policies: dict[str, str] = dict(DEFAULT_POLICIES)


class PolicyError(Exception):
    """The policy file cannot be used; the message names the file and the key to fix."""


def parse_json(path: str, raw: bytes | None = None) -> object:
    """A config file's JSON (from `raw`, its bytes as already read, or else from the file), or None
    when there is no such file; ValueError naming the file otherwise."""
    try:
        if raw is None:
            with open(path, "rb") as f:
                raw = f.read()
        return json.loads(raw.decode("utf-8-sig"))  # a byte order mark, as some editors write, is fine
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as e:  # where, in an editor's terms, and the commonest cause by name
        before = e.doc[:e.pos].rstrip()
        comma = before.endswith(",") and e.msg.startswith(("Expecting property name", "Expecting value"))
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: line {e.lineno}, column {e.colno}: "
                         f"{e.msg}" + (" (a trailing comma?)" if comma else "")) from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: {e}") from None


def parse_policies(path: str = POLICY_PATH, raw: bytes | None = None) -> dict[str, str]:
    """The file's tool policies, all checked; a missing file has none."""
    try:
        data = parse_json(path, raw)
    except ValueError as e:
        raise PolicyError(str(e)) from None
    return _checked_policies(path, {} if data is None else data)


def load_policies(path: str = POLICY_PATH, policies: dict[str, str] | None = None) -> dict[str, str]:
    """Overlay the file's policies (or `policies`, as already parsed) on the defaults; no file keeps the defaults."""
    policies = parse_policies(path) if policies is None else policies
    _policies.clear()
    _policies.update(DEFAULT_POLICIES)
    _policies.update(policies)
    return dict(_policies)


def _checked_policies(path: str, data: object) -> dict[str, str]:
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


def set_policy(name: str, policy: str) -> None:
    """Set one tool's policy for this session (as GeekAgent.json would)."""
    if policy not in POLICIES:
        raise ValueError(f"policy for {name} must be one of {', '.join(POLICIES)}, not {policy!r}")
    _policies[name] = policy


def ensure_tool_policy(name: str, default: str) -> None:
    """Give a tool a policy only if none is configured (GeekAgent.json wins)."""
    _policies.setdefault(name, default)


def policy_for(name: str) -> str:
    """The tool's policy; a tool nobody configured or ensured is denied."""
    return _policies.get(name, "deny")


def ask_on_stdin(prompt: str, always: bool = True) -> bool | str:
    """Default confirmation: the y/N question on stdin; end of input is no."""
    try:
        typed = input(f"{prompt} [y/N{'/a=always' if always else ''}] ")
    except EOFError:
        print()  # Ctrl-D: the "no" goes on a line of its own
        return False
    return answer_of(typed, always)


def answer_of(typed: str, always: bool = True) -> bool | str:
    """What a y/N answer says: y or yes runs it once; a or always (beyond the tutorial, when offered)
    is "always"; anything else, Enter included, is no."""
    answer = typed.strip().lower()
    if always and answer in ("a", "always"):
        return "always"
    return answer in ("y", "yes")


# The one confirmation function; index.py may replace it through set_confirm().
_confirm: Callable[[str], bool | str] = ask_on_stdin
# What the model reads for a call that was not allowed (beyond the tutorial: a run that cannot ask says so).
DECLINED = "call cancelled: the user declined {name}."
_declined = DECLINED


def set_confirm(confirm: Callable[[str], bool | str], declined: str = DECLINED) -> None:
    """Choose how "ask" tools are confirmed (tests pass a scripted function), and what a no tells the model."""
    global _confirm, _declined
    _confirm, _declined = confirm, declined


def declined(name: str) -> str:
    """The text for the model when `name` was not allowed to run."""
    return _declined.format(name=name)


def authorize(name: str, prompt: str) -> bool:
    """allow -> True, deny -> False, both without asking; ask -> whatever the user answers."""
    policy = policy_for(name)
    if policy != "ask":
        _decisions.last = policy
        return policy == "allow"
    return ask(prompt, name)


# Beyond the tutorial: what was decided for the tool call running on this thread, for the audit
# log (allow, deny, asked-yes, asked-no); tools.run_tool clears it before each call.
_decisions = threading.local()


def ask(prompt: str, name: str | None = None) -> bool:
    """Ask the user whatever the policy says (a secret-looking file, say); the answer is recorded.
    "always" (beyond the tutorial) allows `name` from now on."""
    answer = _confirm(mask_secrets(prompt))
    if answer == "always" and name:
        allow_always(name)
    _decisions.last = "asked-yes" if answer else "asked-no"
    return bool(answer)


# Beyond the tutorial: where an "always" is kept beyond this session (the full agent keeps it in the
# user's own state, never in the folder); remember(name) returns where, for the line that says so.
_remember: Callable[[str], str] | None = None


def set_remember(remember: Callable[[str], str] | None) -> None:
    global _remember
    _remember = remember


def allow_always(name: str) -> None:
    """Set `name` to allow now, and keep that where set_remember() says (GeekAgent.json is the user's to write)."""
    set_policy(name, "allow")
    where = _remember(name) if _remember else "for the rest of this session"
    print(f"{name} is now allowed without asking ({where}).")


def last_decision(clear: bool = False) -> str | None:
    """The decision recorded on this thread since it was last cleared."""
    decision = getattr(_decisions, "last", None)
    if clear:
        _decisions.last = None
    return decision


# Beyond the tutorial: secrets from the environment never reach a prompt, the model or the screen.
# A password in a URL (scheme://user:password@host) is masked wherever it appears.
# (Bounded repeats, so a long run of letters costs linear time, not quadratic.)
URL_PASSWORD = re.compile(r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^/\s:@]{0,256}:)[^/\s@]{1,1024}@")


def mask_secrets(text: str) -> str:
    """Replace the value of every secret-named environment variable that could be a secret (as written,
    and as JSON writes it inside a string; a whole token, never part of a longer word) by
    [REDACTED:<name>], and a URL's password by [REDACTED]."""
    names, pattern = _secrets()
    if pattern is not None:
        text = pattern.sub(lambda match: f"[REDACTED:{names[match.group(0)]}]", text)
    return URL_PASSWORD.sub(r"\1[REDACTED]@", text)


# What _secrets() found, and in which environment: (its names, the values of the secret-named ones,
# (each value that could be a secret -> its name, one pattern matching any of them as a whole token)).
# Every tool result, description and server line is masked, so the environment is read again only when
# its names or those values changed.
_found: tuple = ((), (), ({}, None))


def _secrets() -> tuple[dict[str, str], "re.Pattern | None"]:
    global _found
    names = tuple(getattr(os.environ, "_data", os.environ))  # the raw keys: no decoding of 100 variables
    secret_names = [n for n in os.environ if SECRET_NAME.search(n)] if names != _found[0] else _found[1][0]
    values = (secret_names, [os.environ.get(n) for n in secret_names])
    if names == _found[0] and values == _found[1]:
        return _found[2]
    found = {}
    for name, value in zip(*values):
        if value is not None and len(value) >= MIN_SECRET_LEN and value.lower() not in PLACEHOLDER_KEYS:
            found.update({value: name, json.dumps(value, ensure_ascii=False)[1:-1]: name})
    longest_first = "|".join(re.escape(value) for value in sorted(found, key=len, reverse=True))
    pattern = re.compile(f"(?<![A-Za-z0-9])(?:{longest_first})(?![A-Za-z0-9])") if found else None
    _found = (names, values, (found, pattern))
    return _found[2]
