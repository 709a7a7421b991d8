"""A secret written in the user's own entry, which its server repeats every way a server speaks (a result, an
error, a log notification, a stderr line, glued to other letters; a resource, a prompt), is found nowhere the
agent writes: not on the terminal (the answer, /logs, /last, /audit), not in audit.jsonl or the history file,
not in what -p prints, as text or JSON, and not in any request the model receives. For a token in env, a key
after --api-key in args, and a URL's password; a proxy's password is masked in its URL form."""
import json
import subprocess
import sys

import pytest

from beyond.servers import toolset
from conftest import AGENT, agent_env, assert_no_process_left, connect, fake, run_in_pty, workdir
from fakes.openai_server import FakeOpenAI, answer, tool_calls

TOKEN = "ghp_Zq8vL2mN4pR6tX9w"  # 20 characters
PASSWORD = "pw7Kd2Lq9Zx4Vb6N"  # 16 characters
PROXY = "http://u:p@proxy:3128"
ENTRIES = {  # the entry of the user's file that holds the secret, and the secret
    "env": (fake("context", env={"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN}), TOKEN),
    "args": ({**fake("context"), "args": [*fake("context")["args"], "--api-key", TOKEN]}, TOKEN),
    "url": ({**fake("context"), "args": [*fake("context")["args"], f"postgres://app:{PASSWORD}@db/app"]}, PASSWORD),
}
ALLOWED = {"mcp_leaky_leak": "allow", "mcp_leaky_leak_error": "allow"}


def script(*more: dict) -> list:
    return [tool_calls(("mcp_leaky_leak", {}), ("mcp_leaky_leak_error", {})), answer("done"), *more]


def setup(tmp_path, kind: str) -> tuple:
    """The project (its policies only) and the user's own mcp.json with the leaky server."""
    entry, secret = ENTRIES[kind]
    cwd = workdir(tmp_path / "p", {}, ALLOWED)
    (tmp_path / "config" / "geekagent").mkdir(parents=True)
    (tmp_path / "config" / "geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"leaky": entry}}))
    return cwd, secret


def env(tmp_path, base_url: str) -> dict:
    return {**agent_env(base_url), "NO_COLOR": "1", "TERM": "xterm", "HTTPS_PROXY": PROXY,
            "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def assert_nowhere(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text and (secret == TOKEN or "u:p@" not in text), text[:2000]


@pytest.mark.parametrize("kind", ENTRIES)
def test_nothing_the_repl_shows_keeps_or_sends_holds_it(tmp_path, kind):
    """A turn whose calls leak it, then /logs, /last, /audit, a /call typed with the secret in it, a resource
    attached and a prompt sent."""
    cwd, secret = setup(tmp_path, kind)
    typed = f'/call mcp_leaky_leak {{"note": "{secret}"}}\r'
    with FakeOpenAI(script(answer("read"), answer("reviewed"))) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, env(tmp_path, model.base_url), [
            ("> ", "leak it\r"), ("done", "/logs leaky\r"), ("log says", "/last\r"), ("glued", "/audit\r"),
            ("leak_error", typed), ("the proxy", "see @leaky:leak://held\r"), ("read", "/prompt leaky review code=x "
                                                                              "focus=held\r"), ("reviewed", "/exit\r")])
    requests = json.dumps(model.requests)
    history = (tmp_path / "state" / "geekagent" / "history").read_text()
    audit = (cwd / ".geekagent" / "audit.jsonl").read_text()
    shown = screen.replace(typed[:-1], "")  # what the terminal echoed of the typing is the user's, not ours
    assert_nowhere(secret, shown, requests, history, audit)
    assert "stderr says [REDACTED" in screen and "log says [REDACTED" in screen  # /logs has both, masked
    assert "glued x[REDACTED" in requests and "failed: the secret [REDACTED" in requests  # result and error
    assert "the proxy http://u:[REDACTED]@proxy:3128" in requests
    assert "held [REDACTED" in requests and "(with [REDACTED" in requests  # the resource, the prompt
    assert "[REDACTED" in history and "mcp_leaky_leak" in history


@pytest.mark.parametrize("kind, as_json", [("env", False), ("env", True), ("args", True), ("url", True)])
def test_nothing_p_prints_holds_it(tmp_path, kind, as_json):
    cwd, secret = setup(tmp_path, kind)
    with FakeOpenAI(script()) as model:
        done = subprocess.run([sys.executable, AGENT, "-p", "leak it", *["--json"] * as_json], cwd=cwd,
                              capture_output=True, text=True, timeout=30, env=env(tmp_path, model.base_url))
    assert_no_process_left(cwd)
    assert done.returncode == 0, done.stderr
    assert_nowhere(secret, done.stdout, done.stderr, json.dumps(model.requests))
    if as_json:
        calls = json.loads(done.stdout)["tool_calls"]  # run at once: listed as they ended
        assert sorted((c["name"], c["outcome"]) for c in calls) == [("mcp_leaky_leak", "ok"),
                                                                    ("mcp_leaky_leak_error", "error")]


def test_an_untrusted_folder_cannot_make_words_vanish_and_placeholders_stay(tmp_path):
    """A folder's entry with "API_KEY": "response" is not trusted, so "response" is no secret (its value is
    masked where the folder's entries are shown); the key a local endpoint takes ("ollama") masks nothing."""
    cwd = workdir(tmp_path / "p", {"theirs": {"command": "srv", "env": {"API_KEY": "response"}}})
    (tmp_path / "config" / "geekagent").mkdir(parents=True)
    (tmp_path / "config" / "geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": fake("normal")}}))
    text = "the response from ollama and lm-studio"
    with FakeOpenAI([tool_calls(("mcp_mine_echo", {"text": text})), answer("done")]) as model:
        done = subprocess.run([sys.executable, AGENT], cwd=cwd, input="go\ny\n/exit\n", capture_output=True,
                              text=True, timeout=30, env={**env(tmp_path, model.base_url), "OPENAI_API_KEY": "ollama",
                                                          "GEEKAGENT_TRUST": "0"})
    assert_no_process_left(cwd)
    assert "not trusted" in done.stderr and model.requests[1]["messages"][-1]["content"] == text


def test_a_tool_named_after_a_secret_is_not_offered(tmp_path, capfd):
    """A tool's name goes to the model and the screen as it is, so one that holds a secret is left out."""
    secret = "ghp_named0123456789ab"
    status = connect(tmp_path, {"named": fake("named", json.dumps(["echo", f"get_{secret}"]),
                                              env={"GITHUB_PERSONAL_ACCESS_TOKEN": secret})})["named"]
    assert status.tools == ["mcp_named_echo"] and secret not in json.dumps(toolset.specs())
    assert "a tool is not offered: its name holds a secret" in capfd.readouterr().err
