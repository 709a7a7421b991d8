"""The demo server against demo-server.mjs: the lines of tutorial section 3.2 in, the same lines out
(JSON.stringify's: no spaces, non-ASCII as it is), and where it departs (its marked extensions, and what
the mjs server crashes on) it says so and goes on with the next request."""
import json
import subprocess
import sys

from conftest import DAY15

INFO = '"capabilities":{"tools":{}},"serverInfo":{"name":"geekagent-demo","version":"1.0.0"}'  # tools: an extension
INITIALIZE = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              '"capabilities":{},"clientInfo":{"name":"geekagent","version":"0.1.0"}}}')


def lines_out(*stdin: str) -> list[str]:
    done = subprocess.run([sys.executable, str(DAY15 / "demo_server.py")], input="".join(stdin).encode(),
                          capture_output=True, timeout=10)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.decode("utf-8").splitlines()


def call(request_id: int, name: str, arguments: str = "{}") -> str:
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n'
            % (request_id, name, arguments))


def test_the_round_of_section_3_2_gets_the_lines_of_section_3_2():
    """initialize (its version echoed), no reply to initialized, tools/list, then dice and word_count."""
    out = lines_out(INITIALIZE + "\n", '{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
                    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}\n', call(3, "dice"),
                    call(4, "word_count", '{"text":"Model Context Protocol"}'))
    assert out[0] == '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18",' + INFO + '}}'
    tools = json.loads(out[1])["result"]["tools"]
    assert [t["name"] for t in tools] == ["word_count", "dice"] and tools[0]["inputSchema"]["required"] == ["text"]
    assert out[2].startswith('{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"rolled ')
    assert json.loads(out[2])["result"]["content"][0]["text"] in {f"rolled {n}" for n in range(1, 7)}
    assert out[3] == '{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"22 characters, 3 words"}]}}'
    assert len(out) == 4


def test_where_it_departs_it_says_so_and_goes_on():
    """A blank line and a null line are skipped (the mjs server crashes on null.id); not JSON gets -32700,
    an unknown method -32601, ping {}; word_count without a string text and an unknown tool are errors
    the client reads (the mjs server crashes on text.length of undefined); initialize without a version,
    or with params that are no object, answers without one; each next request is answered."""
    out = lines_out("\n", "null\n", "oops\n", '{"jsonrpc":"2.0","id":1,"method":"nope"}\n',
                    '{"jsonrpc":"2.0","id":2,"method":"ping"}\n', call(3, "word_count"),
                    call(4, "word_count", '{"text":42}'), call(5, "é"),
                    '{"jsonrpc":"2.0","id":6,"method":"initialize","params":"x"}\n')
    assert [json.loads(line).get("error", {}).get("code") for line in out[:2]] == [-32700, -32601]
    assert out[2] == '{"jsonrpc":"2.0","id":2,"result":{}}'
    assert [json.loads(line)["result"]["isError"] for line in out[3:6]] == [True] * 3
    assert out[5] == ('{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"unknown tool: é"}],'
                      '"isError":true}}')
    assert out[6] == '{"jsonrpc":"2.0","id":6,"result":{' + INFO + '}}' and len(out) == 7
