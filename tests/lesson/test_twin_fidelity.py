"""The twin (day15/mcp.py) on what the tutorial sends, as mcp.ts answers it, and on what it never sends,
where the twin does what plain Python does and is robust: only that call or that server fails, the reader
thread lives on (the next call is answered), and no text shows a Python repr (True, None, {'a': 1}).
The server is a script that answers each request with the lines the test gives, as bytes, in turn.
"""
import json
import re
import sys
import textwrap

import pytest

import mcp
from conftest import write_config

SERVER = textwrap.dedent('''
    import json, sys
    given = sys.argv[1]  # method -> raw bytes to write ({id}: the request's id), as JSON or a file holding it
    answers = json.loads(open(given[1:]).read() if given.startswith("@") else given)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" in message and message["method"] in answers:
            given = answers[message["method"]]  # a list: one a request, the last again and again
            raw = (given.pop(0) if isinstance(given, list) and len(given) > 1 else given[0] if isinstance(
                given, list) else given).replace("{id}", str(message["id"]))
            sys.stdout.buffer.write(raw.replace("{deep}", "[" * 100000 + "]" * 100000).encode("latin-1"))
            sys.stdout.buffer.flush()
            if answers.get("exit_after") == message["method"]:
                break  # exits at once, what it wrote still in the pipe
''')
INIT = '{"jsonrpc":"2.0","id":{id},"result":{"protocolVersion":"2025-06-18","capabilities":{}}}\n'
TOOLS = '{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"t"}]}}\n'


@pytest.fixture
def scripted(tmp_path, request):
    """start(method=raw answer, ...): a started twin on the scripted server, stopped when the test ends."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)

    def start(**answers: str) -> mcp.McpClient:
        client = mcp.McpClient("s", mcp.McpServerConfig(sys.executable, [str(script), json.dumps(
            {"initialize": INIT, "tools/list": TOOLS, **answers})]))
        request.addfinalizer(client.stop)
        client.start()
        return client
    return start


def reply(result_json: str) -> str:
    return '{"jsonrpc":"2.0","id":{id},"result":' + result_json + '}\n'


REPR = re.compile(r"\b(True|False|None)\b|\{'|\['")  # what Python's repr of a JSON value shows
AFTER = reply('{"content":[{"type":"text","text":"after"}]}')


def test_what_the_tutorial_sends_is_answered_as_mcp_ts_answers(scripted, monkeypatch):
    """Text parts joined by newlines, (no content), isError's text as the error, an error's message, the timeout."""
    client = scripted(**{"tools/call": [
        reply('{"content":[{"type":"text","text":"a"},{"type":"image","data":""},{"type":"text","text":"b"}]}'),
        reply('{"content":[]}'), reply('{"content":[{"type":"text","text":"bad"}],"isError":true}'),
        '{"jsonrpc":"2.0","id":{id},"error":{"code":-32602,"message":"no such tool"}}\n', "\n"]})
    assert [client.call_tool("t", {}), client.call_tool("t", {})] == ["a\nb", "(no content)"]
    for says in ("bad", "no such tool"):
        with pytest.raises(mcp.McpError, match=f"^{says}$"):
            client.call_tool("t", {})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.3)
    with pytest.raises(mcp.McpError, match=r"^request tools/call timed out \(no reply in 0.3 s\)$"):
        client.call_tool("t", {})


@pytest.mark.parametrize("answer", [
    "\xef\xbb\xbf" + reply('{"content":[{"type":"text","text":"bom"}]}'),  # not JSON to json.loads: no reply
    reply('{"content":[{"type":"text","text":"x"}],"n":NaN}'),  # json.loads takes NaN
    reply('{"content":[{"type":"text","text":"x"}],"n":' + "9" * 5000 + '}'),  # past Python's digits: not JSON
    "\x1c" + reply('{"content":[{"type":"text","text":"x"}]}'),  # str.strip() removes U+001C
    reply('[1,2]'), reply('null'),  # a result that is no object
    '{"jsonrpc":"2.0","id":{id},"error":{}}\n', '{"jsonrpc":"2.0","id":{id},"error":[]}\n',  # no error: no result
    '{"jsonrpc":"2.0","id":{id},"error":{"message":{"a":1}}}\n',  # a message that is no string: the error as JSON
    reply('{"content":[{"type":"text","text":null},{"type":"text","text":true}]}'),  # texts that are no strings
    reply('{"content":{"type":"text","text":"x"},"isError":[]}'),  # content no list, isError falsy
    '{"jsonrpc":"2.0","id":true,"result":{}}\n{"jsonrpc":"2.0","id":1.0,"result":{}}\n',  # ids that are no int
])
def test_what_the_tutorial_never_sends_fails_only_that_call(scripted, monkeypatch, answer):
    client = scripted(**{"tools/call": [answer, AFTER]})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.5)  # where no reply is taken, the timeout ends the call
    try:
        said = client.call_tool("t", {})
    except mcp.McpError as e:
        said = str(e)
    assert not REPR.search(said), said
    assert client.call_tool("t", {}) == "after"  # the reader lives on


def test_a_line_without_its_newline_is_no_reply(scripted, monkeypatch):
    client = scripted(**{"tools/call": reply('{"content":[{"type":"text","text":"x"}]}').rstrip("\n")})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.5)
    with pytest.raises(mcp.McpError, match="timed out|exited"):
        client.call_tool("t", {})


def test_a_deeply_nested_line_never_kills_the_reader(scripted):
    """Python cannot parse 100,000 levels (RecursionError; JSON.parse can): the line is skipped, the next is read."""
    deep = reply("{deep}")  # 100,000 levels, made by the server
    client = scripted(**{"tools/call": deep + reply('{"content":[{"type":"text","text":"after"}]}')})
    assert client.call_tool("t", {}) == "after"


@pytest.mark.parametrize("tools_json, fails", [('{}', False), ('false', False), ('7', True),
                                               ('[{"description":"x"}]', True), ('[{"name":true}]', True),
                                               ('["t"]', True)])
def test_tools_that_are_not_named_objects_fail_that_server_only(tmp_path, tools_json, fails):
    """Empty ones (`or []`) are no tools; others fail that server, with a reason and no repr; the next starts."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    odd = '{"jsonrpc":"2.0","id":{id},"result":{"tools":' + tools_json + '}}\n'
    entry = lambda listed: {"command": sys.executable,  # noqa: E731
                            "args": [str(script), json.dumps({"initialize": INIT, "tools/list": listed})]}
    try:
        mcp.connect_mcp_servers(write_config(tmp_path, {"odd": entry(odd), "fine": entry(TOOLS)}))
        (odd_status, fine) = mcp.mcp_statuses()
        assert odd_status.error == ("tools/list did not answer a list of named tools" if fails else None)
        assert odd_status.tools == [] and fine.tools == ["mcp_fine_t"]
    finally:
        mcp.stop_mcp_servers()


@pytest.mark.parametrize("config, says", [
    ({"mcpServers": "ab"}, "has no attribute 'items'"),  # no object of servers: the file cannot be used
    ([{"command": "x"}], "has no attribute 'get'"),      # a top-level list has no "mcpServers"
])
def test_a_file_of_another_shape_cannot_be_used(tmp_path, config, says):
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    with pytest.raises(AttributeError, match=says):
        mcp.connect_mcp_servers(str(tmp_path / "mcp.json"))


def test_an_entry_that_is_no_object_or_has_numbers_in_args(tmp_path):
    """"a": 5 and an entry without "command" fail that server, unstarted, saying which key; "args": [8080] and
    an env number run as their str()."""
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    answers = json.dumps({"initialize": INIT, "tools/list": TOOLS})
    try:
        mcp.connect_mcp_servers(write_config(tmp_path, {"a": 5, "b": {"args": []}, "n": {
            "command": sys.executable, "args": [str(script), answers, 8080], "env": {"PORT": 8080}}}))
        broken, no_command, numbers = mcp.mcp_statuses()
        assert broken.error == no_command.error == '"command" must be a string: the program that runs the server'
        assert numbers.tools == ["mcp_n_t"]
        assert mcp._clients[-1].proc.args[-1] == "8080"
    finally:
        mcp.stop_mcp_servers()


def test_what_a_server_wrote_before_it_exited_is_read_first():
    """8 MiB written, then the exit: Node's 'data' events come before 'exit', so mcp.ts has the reply."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        script = f"{folder}/server.py"
        open(script, "w").write(SERVER)
        big = reply('{"content":[{"type":"text","text":"' + "x" * (8 << 20) + '"}]}')
        answers = {"initialize": INIT, "tools/list": TOOLS, "exit_after": "tools/call", "tools/call": big}
        path = f"{folder}/answers.json"
        open(path, "w").write(json.dumps(answers))
        client = mcp.McpClient("s", mcp.McpServerConfig(sys.executable, [script, f"@{path}"]))
        try:
            client.start()
            assert len(client.call_tool("t", {})) == 8 << 20
        finally:
            client.stop()


def test_descriptions_and_schemas_that_are_no_strings_or_objects_fall_back(tmp_path):
    """A description that is an object or null, a schema that is a list: the name and the empty schema,
    as `info.description ?? info.name` and `?? {type: 'object', properties: {}}` give for null."""
    import tools
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    listed = ('{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"obj","description":{"a":1},"inputSchema":[1]},'
              '{"name":"plain","description":null},{"name":"said","description":"does it"}]}}\n')
    entry = {"command": sys.executable, "args": [str(script), json.dumps({"initialize": INIT, "tools/list": listed})]}
    try:
        mcp.connect_mcp_servers(write_config(tmp_path, {"s": entry}))
        assert mcp.mcp_statuses()[0].tools == ["mcp_s_obj", "mcp_s_plain", "mcp_s_said"]
        assert [tools.get_tool(f"mcp_s_{n}").description for n in ("obj", "plain", "said")] == [
            "[MCP:s] obj", "[MCP:s] plain", "[MCP:s] does it"]
        assert tools.get_tool("mcp_s_obj").parameters == {"type": "object", "properties": {}}
    finally:
        mcp.stop_mcp_servers()
