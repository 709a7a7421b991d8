"""The twin (day15/mcp.py) on inputs where Python's defaults differ from what mcp.ts does.

For each, what mcp.ts does is reasoned from its code and written down: onData splits at "\\n" only and
trim()s (JavaScript's whitespace, not Python's), JSON.parse refuses NaN and takes any integer,
`if (msg.error)` and `if (result.isError)` test JavaScript's truth, join() writes null as "",
`list.tools ?? []` is iterated by for...of, `Object.entries(config.mcpServers ?? {})` takes what
is there. The server is a script that answers each request with a line the test gives, as bytes.
"""
import json
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
            raw = answers[message["method"]].replace("{id}", str(message["id"]))
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


@pytest.mark.parametrize("answer, mcp_ts_returns", [
    # a leading byte order mark is JavaScript whitespace: trim() removes it and the line parses
    ("\xef\xbb\xbf" + reply('{"content":[{"type":"text","text":"bom"}]}'), "bom"),
    # join() writes a null text as ""; the other item is kept
    (reply('{"content":[{"type":"text","text":null},{"type":"text","text":"b"}]}'), "\nb"),
    # a result that is an array has no content: (no content)
    (reply('[1,2]'), "(no content)"),
    # an integer of 5,000 digits is a number to JSON.parse: the line is taken
    (reply('{"content":[{"type":"text","text":"big"}],"n":' + "9" * 5000 + '}'), "big"),
])
def test_the_twin_takes_what_mcp_ts_takes(scripted, answer, mcp_ts_returns):
    assert scripted(**{"tools/call": answer}).call_tool("t", {}) == mcp_ts_returns


@pytest.mark.parametrize("answer, says", [
    # {} and [] are true: `if (msg.error)` rejects, with JSON.stringify(error) as the message
    ('{"jsonrpc":"2.0","id":{id},"error":{}}\n', "{}"),
    ('{"jsonrpc":"2.0","id":{id},"error":[]}\n', "[]"),
    # isError: [] is true: the text is the error
    (reply('{"content":[{"type":"text","text":"bad"}],"isError":[]}'), "bad"),
])
def test_javascript_truth_decides_what_is_an_error(scripted, answer, says):
    with pytest.raises(mcp.McpError) as caught:
        scripted(**{"tools/call": answer}).call_tool("t", {})
    assert str(caught.value) == says


@pytest.mark.parametrize("answer", [
    reply('{"content":[{"type":"text","text":"x"}],"n":NaN}'),  # JSON.parse refuses NaN: the line is skipped
    reply('{"content":[{"type":"text","text":"x"}]}').rstrip("\n"),  # no newline: never a whole line
    "\x1c" + reply('{"content":[{"type":"text","text":"x"}]}'),  # U+001C is no JS whitespace: not JSON
])
def test_a_line_mcp_ts_does_not_take_is_no_reply(scripted, monkeypatch, answer):
    client = scripted(**{"tools/call": answer})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.5)  # no reply comes: the timeout is what ends the call
    with pytest.raises(mcp.McpError, match="timed out|exited"):
        client.call_tool("t", {})


def test_a_deeply_nested_line_never_kills_the_reader(scripted):
    """Python cannot parse 100,000 levels (RecursionError; JSON.parse can): the line is skipped, the next is read."""
    deep = reply("{deep}")  # 100,000 levels, made by the server
    client = scripted(**{"tools/call": deep + reply('{"content":[{"type":"text","text":"after"}]}')})
    assert client.call_tool("t", {}) == "after"


@pytest.mark.parametrize("tools_json", ['{}', 'false'])
def test_tools_that_for_of_cannot_iterate_fail_that_server(scripted, tools_json):
    """connect's `for...of` throws a TypeError for tools that are no array (caught there: that server failed)."""
    with pytest.raises(TypeError, match="not iterable"):
        scripted(**{"tools/list": '{"jsonrpc":"2.0","id":{id},"result":{"tools":' + tools_json + '}}\n'})


def test_mcp_servers_as_a_list_is_taken_by_index_and_a_nameless_tool_is_undefined(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    nameless = '{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"description":"no name"}]}}\n'
    entry = {"command": sys.executable, "args": [str(script), json.dumps({"initialize": INIT, "tools/list": nameless})]}
    path = write_config(tmp_path, {})
    with open(path, "w") as f:
        json.dump({"mcpServers": [entry]}, f)
    try:
        mcp.connect_mcp_servers(path)
        assert [(s.server, s.tools, s.error) for s in mcp.mcp_statuses()] == [("0", ["mcp_0_undefined"], None)]
    finally:
        mcp.stop_mcp_servers()


@pytest.mark.parametrize("config, names", [
    ({"mcpServers": "ab"}, ["0", "1"]),      # Object.entries("ab"): its characters by index
    ({"mcpServers": 7}, []),                 # a number has no entries
    ({"mcpServers": None}, []),              # null ?? {}
    ([{"command": "x"}], []),                # a top-level list has no .mcpServers
    ({"mcpServers": {"a": 5}}, ["a"]),       # an entry that is no object: taken, and fails in start()
])
def test_mcp_servers_of_any_shape_give_what_object_entries_gives(config, names):
    assert [name for name, _ in mcp.mcp_server_entries(config)] == names


def test_a_null_config_throws_as_reading_a_property_of_null_does():
    with pytest.raises(TypeError, match="null"):
        mcp.mcp_server_entries(None)


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


def test_values_are_written_as_javascript_writes_them(tmp_path):
    """A tool named true, described by an object and by null: `${info.name}` and `${description}` write
    true, [object Object] and the name, not Python's True or a dict's repr."""
    import tools
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    listed = ('{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":true,"description":{"a":1}},'
              '{"name":"plain","description":null}]}}\n')
    entry = {"command": sys.executable, "args": [str(script), json.dumps({"initialize": INIT, "tools/list": listed})]}
    path = write_config(tmp_path, {"s": entry})
    try:
        mcp.connect_mcp_servers(path)
        assert mcp.mcp_statuses()[0].tools == ["mcp_s_true", "mcp_s_plain"]
        assert tools.get_tool("mcp_s_true").description == "[MCP:s] [object Object]"
        assert tools.get_tool("mcp_s_plain").description == "[MCP:s] plain"
    finally:
        mcp.stop_mcp_servers()
