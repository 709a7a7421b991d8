"""The demo server line for line against demo-server.mjs: the same stdin bytes, the same lines out.

What the mjs server writes for each input is reasoned from its code (Node's readline splits lines at
\\n, \\r\\n and a lone \\r; JSON.parse refuses NaN; `params ?? {}` keeps a string or a list, whose
fields are undefined; JSON.stringify omits an undefined field, writes no spaces and keeps non-ASCII
as it is; word_count runs `text.length` and `String(text).split(/\\s+/)`). Where demo_server.py
departs (its marked extensions, and the places where the mjs server crashes), the test says so.
"""
import json
import subprocess
import sys

import pytest

from conftest import DAY15

INFO = '"capabilities":{"tools":{}},"serverInfo":{"name":"geekagent-demo","version":"1.0.0"}'  # tools: an extension


def lines_out(stdin: bytes) -> list[str]:
    done = subprocess.run([sys.executable, str(DAY15 / "demo_server.py")], input=stdin, capture_output=True,
                          timeout=10)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.decode("utf-8").splitlines()


def call(text_json: str) -> bytes:
    return ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"word_count","arguments":{"text":'
            + text_json + '}}}\n').encode()


def counted(text: str) -> str:
    return '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + text + '"}]}}'


@pytest.mark.parametrize("stdin, mjs_writes", [
    # initialize without params: params ?? {} is {}, its protocolVersion undefined, so the field is left out
    (b'{"jsonrpc":"2.0","id":1,"method":"initialize"}\n', ['{"jsonrpc":"2.0","id":1,"result":{' + INFO + '}}']),
    # params a string or a list: kept by ??, their .protocolVersion undefined; no crash
    (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":"x"}\n', ['{"jsonrpc":"2.0","id":1,"result":{' + INFO + '}}']),
    (b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":[1]}\n', ['{"jsonrpc":"2.0","id":2,"result":{' + INFO + '}}']),
    (b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":null}}\n',
     ['{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":null,' + INFO + '}}']),
    # text.length of a list is its items; String([1,2]) is "1,2", one word
    (call("[1,2]"), [counted("2 characters, 1 words")]),
    # a number has no length: undefined; String(42) is one word
    (call("42"), [counted("undefined characters, 1 words")]),
    # \x1f and U+0085 are no \s in JavaScript: one word; U+FEFF is, so two
    (call('"a\\u001fb\\u0085c"'), [counted("5 characters, 1 words")]),
    (call('"a\\ufeffb"'), [counted("3 characters, 2 words")]),
    # length counts UTF-16 units: an emoji is two
    (call('"\\ud83d\\ude00 ok"'), [counted("5 characters, 2 words")]),
    # a tool without a name: `${params.name}` is "undefined"; non-ASCII is written as it is
    (b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}\n',
     ['{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"unknown tool: undefined"}],"isError":true}}']),
    ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"é"}}\n'.encode(),
     ['{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"unknown tool: é"}],"isError":true}}']),
    # two messages apart by a lone \r are two lines to readline
    (b'{"jsonrpc":"2.0","id":6,"method":"initialize"}\r{"jsonrpc":"2.0","id":7,"method":"initialize"}\n',
     ['{"jsonrpc":"2.0","id":6,"result":{' + INFO + '}}', '{"jsonrpc":"2.0","id":7,"result":{' + INFO + '}}']),
])
def test_the_same_stdin_gives_the_lines_demo_server_mjs_writes(stdin, mjs_writes):
    assert lines_out(stdin) == mjs_writes


def test_where_it_departs_from_the_mjs_server_it_says_so_and_goes_on():
    """The mjs server crashes on a null line (null.id) and on word_count without text (text.length of
    undefined), and says nothing to NaN (JSON.parse refuses it): this one skips the null line, answers
    the missing text, and gives NaN the parse error of its marked extension; the next request is answered."""
    out = lines_out(b'null\n' + call("null") + b'{"jsonrpc":"2.0","id":NaN,"method":"initialize"}\n'
                    + b'{"jsonrpc":"2.0","id":9,"method":"initialize"}\n')
    assert out[0] == counted("no text to count")
    assert json.loads(out[1])["error"]["code"] == -32700
    assert out[2] == '{"jsonrpc":"2.0","id":9,"result":{' + INFO + '}}'
