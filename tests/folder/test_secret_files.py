"""The full agent's side of the permission question: secrets masked in what the model reads and the
user is asked, and `read` asking for a file of secrets even when it is allowed (read_question)."""
import json
import os

import pytest

import tools
from beyond.folder.approvals import Approvals
from beyond.folder.secret_files import read_question
from beyond.servers import toolset
from beyond.servers.calls import Calls
from conftest import answer_every_question, set_tool_policy
from tools import Tool


def test_secrets_are_masked_in_results_and_prompts(monkeypatch):
    """Values of *KEY*/*TOKEN* variables are replaced in tool results and in prompts (by value; by place too)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-1234567890")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_abcdefgh")
    tools.register_tool(Tool("leak", "", {"type": "object"}, lambda args: "key=sk-test-1234567890 ghp_abcdefgh"))
    set_tool_policy("leak", "ask")
    asked = []
    answer_every_question(monkeypatch, lambda prompt: asked.append(prompt) or True)
    result = Calls(Approvals()).run("leak", json.dumps({"token": "ghp_abcdefgh"}))
    assert result == "key=[REDACTED:OPENAI_API_KEY] [REDACTED:GITHUB_TOKEN]"
    assert "ghp_abcdefgh" not in asked[0] and "[REDACTED:GITHUB_TOKEN]" in asked[0]


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
    answers, asked = [False, True], []
    calls = Calls(Approvals(confirm=lambda prompt, always=True: asked.append(prompt) or answers.pop(0)))
    plain = tools.get_tool("read")
    toolset.replace_builtin(toolset.Asking(plain.name, plain.description, plain.parameters, plain.run,
                                           question=read_question(str(tmp_path))))
    assert calls.run("read", json.dumps({"path": path})) == "call cancelled: the user declined read."
    assert "looks like a file of secrets" in asked[0]
    assert "hunter2" not in calls.run("read", json.dumps({"path": path}))  # and a URL password is masked
    assert len(asked) == 2
    (tmp_path / "notes.txt").write_text("plain")
    assert calls.run("read", '{"path": "notes.txt"}') == "plain" and len(asked) == 2  # allowed: not asked
