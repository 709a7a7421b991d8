"""The full client's connect_mcp_servers: config errors, one good and one failing server, registry names."""
import json
import re
import sys

import pytest

import beyond_mcp
from beyond.servers import registry
from beyond.servers import toolset
from conftest import (
    LESSON, agent_env, answer_every_question, demo, policy_of, run_agent, run_call, set_tool_policy, workdir,
    write_config)


def test_missing_file_means_no_servers(tmp_path):
    """No mcp.json: no servers, no error."""
    assert beyond_mcp.connect_mcp_servers(str(tmp_path / "absent.json")) == []


@pytest.mark.parametrize("content, problem", [
    ("{not json", "cannot read mcp.json"),
    ('{"mcpServers": {"a": {"command": "x",}}}',  # Python 3.13 names the trailing comma itself
     r"line 1, column (38: Expecting property name enclosed in double quotes \(a trailing comma\?\)|"
     r"37: Illegal trailing comma before end of object)"),
    ('{"mcpServers": []}', '"mcpServers" must be an object'),
])
def test_broken_file_names_file_and_key(tmp_path, content, problem):
    """A config that is not JSON, or has no object of servers, raises McpError naming the file and what is wrong."""
    path = tmp_path / "mcp.json"
    path.write_text(content)
    with pytest.raises(beyond_mcp.McpError) as caught:
        beyond_mcp.connect_mcp_servers(str(path))
    assert str(path) in str(caught.value) and re.search(problem, str(caught.value))


@pytest.mark.parametrize("content, problem", [
    ('{"mcpServers": {"a": {"args": []}}}', 'mcpServers.a: "command" must be a non-empty string'),
    ('{"mcpServers": {"a": {"command": 5}}}', 'mcpServers.a: "command"'),
    ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', 'mcpServers.a: "args" must be a list of strings'),
    ('{"mcpServers": {"a": {"command": "x", "args": [1]}}}', 'mcpServers.a: "args"'),
    ('{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}', 'mcpServers.a: "env"'),
    ('{"mcpServers": {"a": {"command": "x", "timeout": -1}}}', 'mcpServers.a: "timeout"'),
    ('{"mcpServers": {"a": {"comand": "x"}}}', 'mcpServers.a: unknown key "comand" (did you mean "command"?)'),
    ('{"mcpServers": {"a": {"command": "x", "startuptimeout": 9}}}', 'did you mean "startupTimeout"?'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "callbackPort": 8765}}}',
     'mcpServers.a: "callbackPort" belongs inside "oauth" (did you mean "oauth.callbackPort"?)'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "scopes": ["read"]}}}', 'did you mean "oauth.scopes"'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"grant": "jwt_bearer", "clientId": "c", '
     '"callbackPort": 9}}}}', '"oauth.grant" and "oauth.callbackPort" cannot go together; keep one'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"grant": "jwt_bearer", "clientId": "c", '
     '"assertion": "x", "assertionFile": "f"}}}}', '"oauth.assertion" and "oauth.assertionFile" cannot go together'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"grant": "client_credentials", "clientId": "c"}}}}',
     '"grant": "client_credentials" needs "oauth.clientSecret"'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"grant": "jwt_bearer", "clientId": "c"}}}}',
     'needs "oauth.assertion (or assertionFile)"'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"clientId": "c", "idToken": "t"}}}}',
     '"oauth.idToken" is for "grant": "enterprise"'),
    ('{"mcpServers": {"a": {"url": "https://x.test/mcp", "oauth": {"tokenEndpointAuthMethod": "basic"}}}}',
     '"oauth.tokenEndpointAuthMethod" must be "client_secret_basic" or "client_secret_post" or "none"'),
])
def test_a_broken_entry_fails_that_server_only(tmp_path, content, problem):
    """A broken entry is that server's error, naming the file and the key; the good one beside it starts."""
    path = tmp_path / "mcp.json"
    config = json.loads(content)
    config["mcpServers"]["demo"] = demo()
    path.write_text(json.dumps(config))
    statuses = {s.server: s for s in beyond_mcp.connect_mcp_servers(str(path))}
    assert str(path) in statuses["a"].error and problem in statuses["a"].error and statuses["a"].tools == []
    assert statuses["demo"].tools == ["mcp_demo_word_count", "mcp_demo_dice"]


def test_good_and_failing_server(tmp_path):
    """The good server's tools are registered with policy ask; the failing one records its error."""
    path = write_config(tmp_path, {"demo": demo(), "broken": {"command": "/no/such/server"}})
    statuses = {s.server: s for s in beyond_mcp.connect_mcp_servers(path)}
    assert statuses["demo"].tools == ["mcp_demo_word_count", "mcp_demo_dice"]
    assert statuses["demo"].error is None
    assert "cannot start server" in statuses["broken"].error
    assert policy_of("mcp_demo_dice") == "ask"
    assert toolset.get("mcp_demo_word_count").description.startswith("[MCP:demo] Count the characters")


def test_crashing_server_is_stopped_and_recorded(tmp_path):
    """A server that exits during the handshake is reported with its exit code."""
    crash = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(4)"]}
    (status,) = beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"crash": crash}))
    assert "server exited (code 4)" in status.error


def test_configured_policy_wins(tmp_path):
    """A policy set in GeekAgent.json is not overridden by the MCP default ask."""
    set_tool_policy("mcp_demo_dice", "allow")
    beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"demo": demo()}))
    assert policy_of("mcp_demo_dice") == "allow"
    assert policy_of("mcp_demo_word_count") == "ask"


def test_names_are_sanitized():
    """Characters outside [a-zA-Z0-9_-] become underscores."""
    assert registry.registry_name("my.server", "read file/v2") == "mcp_my_server_read_file_v2"


def test_adapter_description_and_default_schema():
    """No description falls back to the tool name; no inputSchema gives an empty object schema."""
    tool = registry.as_registry_tool("srv", None, {"name": "ping-it"})
    assert tool.name == "mcp_srv_ping-it"
    assert tool.description == "[MCP:srv] ping-it"
    assert tool.parameters == {"type": "object", "properties": {}}


def test_adapter_prompt_shows_server_tool_and_arguments(tmp_path, monkeypatch):
    """The ask prompt names server, tool and the JSON arguments; declining returns 'call cancelled'."""
    beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"demo": demo()}))
    prompts = []
    answer_every_question(monkeypatch, lambda prompt: prompts.append(prompt) or False)
    result = run_call("mcp_demo_word_count", '{"text": "hello there"}')
    assert result.startswith("call cancelled")
    assert "'demo'" in prompts[0] and "'word_count'" in prompts[0] and '{"text": "hello there"}' in prompts[0]


def test_adapter_runs_tool_when_allowed(tmp_path, monkeypatch):
    """An accepted prompt calls the server with the original tool name."""
    beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"demo": demo()}))
    answer_every_question(monkeypatch, lambda prompt: True)
    assert run_call("mcp_demo_word_count", '{"text": "Model Context Protocol"}') == "22 characters, 3 words"


def test_long_arguments_are_shortened_in_prompt(tmp_path, monkeypatch):
    """A huge argument is shortened in the prompt, but sent whole."""
    beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"demo": demo()}))
    prompts = []
    answer_every_question(monkeypatch, lambda prompt: prompts.append(prompt) or True)
    text = "word " * 2000
    assert run_call("mcp_demo_word_count", json.dumps({"text": text})) == "10000 characters, 2000 words"
    assert len(prompts[0]) < 1000


def test_stop_mcp_servers_unregisters_tools(tmp_path):
    """After stop_mcp_servers() the MCP tools are gone and no status remains."""
    beyond_mcp.connect_mcp_servers(write_config(tmp_path, {"demo": demo()}))
    beyond_mcp.stop_mcp_servers()
    assert toolset.get("mcp_demo_dice") is None and beyond_mcp.mcp_statuses() == []


def test_a_vs_code_file_is_read_and_what_it_cannot_do_is_named(tmp_path, monkeypatch):
    """VS Code's shape: "servers", type stdio, ${env:NAME}; ${input:...} and envFile fail their entry, naming them."""
    monkeypatch.setenv("DEMO_SCRIPT", demo()["args"][0])
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {
        "demo": {"type": "stdio", "command": demo()["command"], "args": ["${env:DEMO_SCRIPT}"]},
        "asks": {"type": "stdio", "command": "x", "env": {"TOKEN": "${input:token}"}},
        "file": {"type": "stdio", "command": "x", "envFile": "${workspaceFolder}/.env"}}}))
    statuses = {s.server: s for s in beyond_mcp.connect_mcp_servers(str(path))}
    assert statuses["demo"].error is None and len(statuses["demo"].tools) == 2
    assert "servers.asks: ${input:...}" in statuses["asks"].error
    assert 'servers.file: "envFile" is not supported' in statuses["file"].error
    beyond_mcp.stop_mcp_servers()


def user_file(home, servers: dict) -> None:
    folder = home / "config" / "geekagent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}) if isinstance(servers, dict) else servers)


def test_the_users_own_servers_start_in_every_folder_without_trust(tmp_path, own_user_dirs):
    """$XDG_CONFIG_HOME/geekagent/mcp.json adds servers wherever the agent starts; the folder's entry wins
    by name; each status line says which file; an untrusted folder's servers do not start, the user's do."""
    user_file(own_user_dirs, {"mine": demo(), "demo": {"command": "/no/such/server"}})
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None))
    assert "  mine (2 tools)  (" in done.stdout and "geekagent/mcp.json)" in done.stdout
    assert "  demo (2 tools)  (.geekagent/mcp.json)" in done.stdout and "/no/such/server" not in done.stdout
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None, trust=False))
    assert "  mine (2 tools)" in done.stdout and "demo (2 tools)" not in done.stdout
    assert "x demo: cannot start server" in done.stdout  # the user's own entry, the folder's not being trusted


def test_without_a_project_the_users_servers_start(tmp_path, own_user_dirs):
    user_file(own_user_dirs, {"mine": demo()})
    (tmp_path / "alone").mkdir()
    done = run_agent(tmp_path / "alone", ["/exit"], agent_env(key=None))
    assert "  mine (2 tools)" in done.stdout and "built-in tools only" not in done.stdout


def test_the_tutorials_client_reads_the_folders_file_only(tmp_path, own_user_dirs):
    user_file(own_user_dirs, {"mine": demo()})
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None), program=LESSON)
    assert "demo (2 tools)" in done.stdout and "mine" not in done.stdout


def test_a_broken_user_file_is_named_and_the_folders_servers_start(tmp_path, own_user_dirs):
    user_file(own_user_dirs, '{"mcpServers": {"mine": {"command": "x",}}}')
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    done = run_agent(cwd, ["/exit"], agent_env(key=None))
    assert "geekagent/mcp.json" in done.stderr and "trailing comma" in done.stderr
    assert "demo (2 tools)" in done.stdout
