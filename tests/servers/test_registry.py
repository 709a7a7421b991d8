"""A server's tools as registry tools (beyond/servers/registry.py): names, collisions, prompts that show and
mask, list changes."""
import json

import beyond_mcp
from beyond.servers import registry
from beyond.servers import toolset
from conftest import (
    agent_env, answer_every_question, connect, fake, policy_of, run_agent, run_call, said_on_stderr,
    set_tool_policy, wait_until, workdir)
from fakes.openai_server import FakeOpenAI, answer


def test_list_changed_updates_registry(tmp_path, capfd):
    """After tools/list_changed, the new tool is registered and the removed one is gone, and that is said;
    policies stay."""
    set_tool_policy("mcp_fake_echo", "allow")
    set_tool_policy("mcp_fake_change_tools", "allow")
    connect(tmp_path, {"fake": fake("normal")})
    assert toolset.get("mcp_fake_child_pid") and not toolset.get("mcp_fake_extra")
    assert run_call("mcp_fake_change_tools", "{}") == "changed"
    assert wait_until(lambda: toolset.get("mcp_fake_extra") is not None)
    assert toolset.get("mcp_fake_child_pid") is None
    assert "mcp_fake_extra" in beyond_mcp.mcp_statuses()[0].tools
    assert policy_of("mcp_fake_echo") == "allow"
    assert policy_of("mcp_fake_extra") == "ask"
    # The line is written just after the registry changes, on the re-list thread.
    assert said_on_stderr(capfd, "[mcp:fake] tools changed: added mcp_fake_extra; removed mcp_fake_child_pid")


def test_long_and_colliding_names(tmp_path, monkeypatch):
    """Names stay within 64 characters and distinct; each calls the server's original name."""
    status = connect(tmp_path, {"fake": fake("long_names")})["fake"]
    names = status.tools
    assert len(names) == 5 == len(set(names))
    assert all(len(n) <= 64 for n in names)
    assert "mcp_fake_read_file" not in names  # contested: neither of the pair gets it
    answer_every_question(monkeypatch, lambda prompt: True)
    for name, text in zip(names, ["e", "a70", "a69b", "dot", "underscore"]):
        assert run_call(name, json.dumps({"text": text})) == text


def test_tools_a_model_endpoint_would_refuse_are_left_out(tmp_path):
    """inputSchema a string, a list or a non-object schema: not offered, named in a warning and in /mcp;
    a long description is sent bounded; the endpoint accepts every request."""
    cwd = workdir(tmp_path, {"b": fake("bad_schemas")})
    with FakeOpenAI([answer("ok")]) as model:
        done = run_agent(cwd, ["hi", "/mcp", "/exit"], agent_env(model.base_url))
    assert model.violations == []
    (good,) = [t["function"] for t in model.requests[0]["tools"] if t["function"]["name"].startswith("mcp_b")]
    assert good["name"] == "mcp_b_good" and len(good["description"]) < 2100
    for name in ("text", "list", "string"):
        assert f"{name}: not offered, its inputSchema is not an object schema" in done.stdout
        assert f"tool {name} is not offered" in done.stderr


def test_tool_names_with_lone_surrogates(tmp_path):
    """A tool name with a lone surrogate (and one over 64 characters) registers under a clean name."""
    assert registry.registry_name("s", "bad\udc80" + "n" * 80).startswith("mcp_s_bad_nnn")
    assert len(registry.registry_name("s", "bad\udc80" + "n" * 80)) == 64


def test_prompt_shows_cleaned_bounded_names(monkeypatch):
    """The prompt shows the registry name and a cleaned, bounded form of the server's own tool name."""
    toolset.add(registry.as_registry_tool("srv", None, {"name": "dice\x1b[2K\r\u202e" + "x" * 5000}, "mcp_srv_dice"))
    prompts = []
    answer_every_question(monkeypatch, lambda prompt: prompts.append(prompt) or False)
    set_tool_policy("mcp_srv_dice", "ask")
    assert run_call("mcp_srv_dice", "{}").startswith("call cancelled")
    assert "\x1b" not in prompts[0] and "\\x1b[2K\\x0d<U+202E>" in prompts[0] and len(prompts[0]) < 400


def test_collision_gives_both_tools_hashed_names_and_no_policy(tmp_path, capfd):
    """Servers a (tool b_c) and a_b (tool c) both map to mcp_a_b_c: neither gets it, nor its allow."""
    set_tool_policy("mcp_a_b_c", "allow")
    statuses = connect(tmp_path, {"a": fake("named", json.dumps(["b_c"])), "a_b": fake("named", json.dumps(["c"]))})
    (first,), (second,) = statuses["a"].tools, statuses["a_b"].tools
    assert first != second and "mcp_a_b_c" not in (first, second)
    assert policy_of(first) == policy_of(second) == "ask"
    err = capfd.readouterr().err
    assert "would be named mcp_a_b_c" in err and "b_c of server a" in err and "c of server a_b" in err


def test_a_tool_named_like_another_servers_reader_takes_neither_name_nor_policy(tmp_path, capfd):
    """Server a's tool b_read_resource and server a_b's resource reader both map to mcp_a_b_read_resource:
    both get hashed names, and the allow written for the reader applies to neither."""
    set_tool_policy("mcp_a_b_read_resource", "allow")
    statuses = connect(tmp_path, {"a": fake("named", json.dumps(["b_read_resource"])), "a_b": fake("context")})
    (tool,) = statuses["a"].tools
    reader = [name for name in statuses["a_b"].tools if "read_resource" in name]
    assert len(reader) == 1 and len({tool, reader[0], "mcp_a_b_read_resource"}) == 3
    assert policy_of(tool) == policy_of(reader[0]) == "ask"
    assert "the resource reader of server a_b" in capfd.readouterr().err


def test_secrets_are_masked_in_descriptions_logs_and_errors(tmp_path, monkeypatch, capfd):
    """A token in a tool description, a log line or an error never reaches the model or the screen."""
    monkeypatch.setenv("MY_TOKEN", 'tok"en\\secret-123')
    connect(tmp_path, {"s": fake("normal", env={"LEAK": "${MY_TOKEN}"})})
    specs = json.dumps(toolset.specs())
    assert "secret-123" not in specs and "[REDACTED:MY_TOKEN]" in specs
    set_tool_policy("mcp_s_refuse", "allow")
    assert "secret-123" not in run_call("mcp_s_refuse", "{}")


def test_prompt_masks_before_it_shortens(monkeypatch):
    """A secret cut in half by the prompt's shortening is masked, not shown in part; so is its JSON form."""
    secret = 'sk-"quoted"-' + "s" * 40
    monkeypatch.setenv("SERVICE_API_KEY", secret)
    toolset.add(registry.as_registry_tool("srv", None, {"name": "t"}, "mcp_srv_t"))
    prompts = []
    answer_every_question(monkeypatch, lambda prompt: prompts.append(prompt) or False)
    set_tool_policy("mcp_srv_t", "ask")
    run_call("mcp_srv_t", json.dumps({"pad": "p" * 470, "key": secret}))
    assert "sk-" not in prompts[0] and "sssss" not in prompts[0]
