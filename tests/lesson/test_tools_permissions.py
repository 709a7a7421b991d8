"""The registry, run_tool, the built-in tools and the policy file."""


import json
import os

import pytest

import permissions
import tools
from tools import Tool


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
        permissions.set_policy(name, "ask")
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
    permissions.set_policy("echo", "allow")
    assert expected in tools.run_tool("echo", arguments)
    assert calls == []


def test_unknown_tool_is_text():
    """An unknown tool name is reported, not raised."""
    assert "unknown tool 'ghost'" in tools.run_tool("ghost", "{}")


def test_deny_never_calls_run_nor_asks():
    """deny: run is never called and no one is asked."""
    calls, asked = [], []
    tools.register_tool(echo_tool(calls=calls))
    permissions.set_policy("echo", "deny")
    permissions.set_confirm(lambda prompt: asked.append(prompt) or True)
    assert tools.run_tool("echo", '{"text": "hi"}').startswith("Denied")
    assert calls == [] and asked == []


def test_unconfigured_tool_is_denied():
    """A tool with no policy at all is denied."""
    calls = []
    tools.register_tool(echo_tool(calls=calls))
    assert tools.run_tool("echo", "{}").startswith("Denied")
    assert calls == []


@pytest.mark.parametrize("answer, ran", [(True, True), (False, False)])
def test_ask_uses_the_confirm_function(answer, ran):
    """ask: the scripted confirm decides; the prompt shows the arguments."""
    calls, asked = [], []
    tools.register_tool(echo_tool(calls=calls))
    permissions.set_policy("echo", "ask")
    permissions.set_confirm(lambda prompt: asked.append(prompt) or answer)
    result = tools.run_tool("echo", '{"text": "hi"}')
    assert bool(calls) is ran
    assert '"text": "hi"' in asked[0]
    assert result == ("echo hi" if ran else "call cancelled: the user declined echo.")


def test_exception_in_run_becomes_text():
    """A tool that raises gives the model an error text."""
    def boom(args):
        raise RuntimeError("disk on fire")
    tools.register_tool(Tool("boom", "", {"type": "object"}, boom))
    permissions.set_policy("boom", "allow")
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
    ("{oops", "cannot read GeekAgent.json"),
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


def test_secrets_are_masked_in_results_and_prompts(monkeypatch):
    """Values of *KEY*/*TOKEN* variables are replaced in tool results and in prompts."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1234567890")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_abcdefgh")
    tools.register_tool(Tool("leak", "", {"type": "object"}, lambda args: "key=sk-test-1234567890 ghp_abcdefgh"))
    permissions.set_policy("leak", "ask")
    asked = []
    permissions.set_confirm(lambda prompt: asked.append(prompt) or True)
    result = tools.run_tool("leak", json.dumps({"token": "ghp_abcdefgh"}))
    assert result == "key=[REDACTED:OPENAI_API_KEY] [REDACTED:GITHUB_TOKEN]"
    assert "ghp_abcdefgh" not in asked[0] and "[REDACTED:GITHUB_TOKEN]" in asked[0]


@pytest.mark.parametrize("placeholder", ["ollama", "none", "EMPTY", "test", "lm-studio", "sk-no-key-required"])
def test_a_local_models_placeholder_key_masks_no_words(monkeypatch, placeholder):
    """OPENAI_API_KEY=ollama (or another placeholder a local endpoint takes) is no secret: what tools say
    stays as it is; a real key is still masked, but only as a whole token, never inside another word."""
    monkeypatch.setenv("OPENAI_API_KEY", placeholder)
    monkeypatch.setenv("MY_TOKEN", "tok-12345678")
    text = f"timezone: none, model {placeholder}, empty test; tok-12345678; xtok-12345678y"
    assert permissions.mask_secrets(text) == \
        f"timezone: none, model {placeholder}, empty test; [REDACTED:MY_TOKEN]; xtok-12345678y"


def test_builtin_tools_stay_inside_root(tmp_path):
    """ls and read work inside the root and refuse '..', absolute paths and escaping symlinks."""
    (tmp_path / "notes.txt").write_text("line one\nline two\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("secret")
    os.symlink(outside, tmp_path / "escape.txt")
    tools.register_builtin_tools(str(tmp_path))
    assert "notes.txt" in tools.run_tool("ls", "{}")
    assert tools.run_tool("read", '{"path": "notes.txt"}') == "line one\nline two"
    for bad in ("../x", str(outside), "escape.txt"):
        result = tools.run_tool("read", json.dumps({"path": bad}))
        assert result.startswith("Error:") and "secret" not in result


def test_read_pages_long_files(tmp_path):
    """read returns one page and says how to get the next."""
    (tmp_path / "long.txt").write_text("".join(f"{i}\n" for i in range(450)))
    tools.register_builtin_tools(str(tmp_path))
    first = tools.run_tool("read", '{"path": "long.txt"}')
    assert first.splitlines()[0] == "0" and "more follows; call read with offset 200" in first
    assert tools.run_tool("read", '{"path": "long.txt", "offset": 400}').splitlines()[-1] == "449"


SECRETS = (".env", ".env.local", "deploy/server.pem", "id_ed25519", ".ssh/config", ".aws/credentials",
           ".docker/config.json", ".kube/config", ".pgpass", ".git/config", "credentials.json", ".bash_history")


@pytest.mark.parametrize("path", SECRETS + ("link-to-env", "hard-link-to-env", "hard-link-to-home-key"))
def test_read_asks_for_secret_looking_files(tmp_path, monkeypatch, path):
    """read is allowed, yet a secret-looking file (or a link, or a hard link, to one) is read only after a yes."""
    for name in SECRETS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("DATABASE_URL=postgres://admin:hunter2@db/x\n")
    os.symlink(tmp_path / ".env", tmp_path / "link-to-env")
    os.link(tmp_path / ".env", tmp_path / "hard-link-to-env")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("postgres://admin:hunter2@db/x\n")
    os.link(home / ".ssh" / "id_ed25519", tmp_path / "hard-link-to-home-key")
    monkeypatch.setenv("HOME", str(home))
    tools.register_builtin_tools(str(tmp_path))
    asked = []
    permissions.set_confirm(lambda prompt: asked.append(prompt) or False)
    assert tools.run_tool("read", json.dumps({"path": path})) == "call cancelled: the user declined read."
    assert "looks like a file of secrets" in asked[0]
    permissions.set_confirm(lambda prompt: True)
    assert "hunter2" not in tools.run_tool("read", json.dumps({"path": path}))  # and a URL password is masked
    (tmp_path / "notes.txt").write_text("plain")
    asked.clear()
    assert tools.run_tool("read", '{"path": "notes.txt"}') == "plain"
