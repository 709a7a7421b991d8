"""The registry, run_tool, the built-in tools and the policy file."""


import json
import os

import pytest

import permissions
import tools
from tools import Tool
from conftest import answer_every_question, set_tool_policy


def echo_tool(name="echo", calls=None) -> Tool:
    def run(args):
        if calls is not None:
            calls.append(args)
        return f"echo {args.get('text')}"
    return Tool(name, "Echo.", {"type": "object", "properties": {}}, run)


def test_duplicate_name_is_rejected():
    """register_tool refuses a name that is taken."""
    tools.register_tool(echo_tool())
    with pytest.raises(ValueError, match="already registered"):
        tools.register_tool(echo_tool())


def test_openai_tools_in_registration_order():
    """openai_tools() lists function specs in registration order."""
    for name in ("b", "a"):
        tools.register_tool(echo_tool(name))
        set_tool_policy(name, "ask")
    specs = tools.openai_tools()
    assert [s["function"]["name"] for s in specs] == ["b", "a"]
    assert specs[0]["type"] == "function" and specs[0]["function"]["parameters"]["type"] == "object"


@pytest.mark.parametrize("arguments, expected", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
])
def test_bad_arguments_become_text(arguments, expected):
    """Arguments that are not a JSON object come back as an error text, run is not called."""
    calls = []
    tools.register_tool(echo_tool(calls=calls))
    set_tool_policy("echo", "allow")
    assert expected in tools.run_tool("echo", arguments)
    assert calls == []


def test_unknown_tool_is_text():
    """An unknown tool name is reported, not raised."""
    assert "unknown tool 'ghost'" in tools.run_tool("ghost", "{}")


def test_deny_never_calls_run_nor_asks(monkeypatch):
    """deny: run is never called and no one is asked."""
    calls, asked = [], []
    tools.register_tool(echo_tool(calls=calls))
    set_tool_policy("echo", "deny")
    answer_every_question(monkeypatch, lambda prompt: asked.append(prompt) or True)
    assert tools.run_tool("echo", '{"text": "hi"}').startswith("Denied")
    assert calls == [] and asked == []


def test_unconfigured_tool_is_denied():
    """A tool with no policy at all is denied."""
    calls = []
    tools.register_tool(echo_tool(calls=calls))
    assert tools.run_tool("echo", "{}").startswith("Denied")
    assert calls == []


@pytest.mark.parametrize("answer, ran", [(True, True), (False, False)])
def test_ask_uses_the_confirm_function(answer, ran, monkeypatch):
    """ask: the scripted confirm decides; the prompt shows the arguments."""
    calls, asked = [], []
    tools.register_tool(echo_tool(calls=calls))
    set_tool_policy("echo", "ask")
    answer_every_question(monkeypatch, lambda prompt: asked.append(prompt) or answer)
    result = tools.run_tool("echo", '{"text": "hi"}')
    assert bool(calls) is ran
    assert '"text": "hi"' in asked[0]
    assert result == ("echo hi" if ran else "call cancelled: the user declined echo.")


def test_exception_in_run_becomes_text():
    """A tool that raises gives the model an error text."""
    def boom(args):
        raise RuntimeError("disk on fire")
    tools.register_tool(Tool("boom", "", {"type": "object"}, boom))
    set_tool_policy("boom", "allow")
    assert tools.run_tool("boom", "{}") == "Error: boom failed: disk on fire"


@pytest.mark.parametrize("typed, expected", [("y\n", True), ("yes\n", True), ("Y\n", True),
                                              ("n\n", False), ("\n", False), ("sure\n", False), ("", False)])
def test_stdin_prompt_only_yes_counts(monkeypatch, typed, expected):
    """The default y/N prompt accepts only y/yes; end of input is no."""
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    assert permissions.ask_on_stdin("Run it?") is expected


def test_policy_file_overlays_defaults(tmp_path):
    """The file's policies are added to the defaults and may override them."""
    path = tmp_path / "GeekAgent.json"
    path.write_text(json.dumps({"tools": {"read": "deny", "mcp_demo_dice": "allow"}}))
    policies = permissions.load_policies(str(path))
    assert policies["read"] == "deny" and policies["ls"] == "allow" and policies["mcp_demo_dice"] == "allow"


def test_missing_policy_file_keeps_defaults(tmp_path):
    """No GeekAgent.json: the built-in defaults apply."""
    assert permissions.load_policies(str(tmp_path / "none.json")) == permissions.DEFAULT_POLICIES


@pytest.mark.parametrize("content, problem", [
    ("{oops", "cannot read it: Expecting property name"),
    ('{"tools": ["read"]}', '"tools" must be an object'),
    ('{"tools": {"mcp_demo_dice": "yes"}}', "tools.mcp_demo_dice must be"),
    ("[]", "top level must be a JSON object"),
])
def test_broken_policy_file_names_file_and_key(tmp_path, content, problem):
    """A broken policy file is an error naming the file and the key; nothing is widened."""
    path = tmp_path / "GeekAgent.json"
    path.write_text(content)
    with pytest.raises(permissions.PolicyError) as caught:
        permissions.load_policies(str(path))
    assert str(path) in str(caught.value) and problem in str(caught.value)
    assert permissions.policy_for("mcp_demo_dice") == "deny"


def test_builtin_tools_stay_inside_root(tmp_path):
    """ls and read work inside the root and refuse '..', absolute paths and escaping symlinks."""
    (tmp_path / "notes.txt").write_text("line one\nline two\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    os.symlink(outside, tmp_path / "escape.txt")
    tools.register_builtin_tools(str(tmp_path))
    assert "notes.txt" in tools.run_tool("ls", "{}")
    assert tools.run_tool("read", '{"path": "notes.txt"}') == "line one\nline two\n"
    for bad in ("../x", str(outside), "escape.txt"):
        result = tools.run_tool("read", json.dumps({"path": bad}))
        assert result.startswith("Error:") and "secret" not in result
