"""What a server answers, as text (beyond/client/content.py): content of every kind, lines parsed as JSON
reads them, lists within bounds."""
import json

import pytest

from conftest import connect, fake
from mcp import McpError


def test_rich_content_is_described(started):
    """Image, audio, resources and links become readable text."""
    assert started(fake("normal")).call_tool("rich", {}).splitlines() == [
        "[image: image/png, 8 bytes]", "[audio: audio/wav, 4 bytes]", "inside a.txt",
        "[resource: file:///b.bin, unknown type, 3 bytes]", "[link: file:///c.md]"]


def test_structured_content_only(started):
    """A result with only structuredContent returns its JSON."""
    assert json.loads(started(fake("normal")).call_tool("structured", {})) == {"temperature": 21.5}


def test_deep_json_is_a_parse_error_not_a_dead_reader(started, capfd):
    """JSON nested 100,000 deep is skipped as not JSON-RPC; the reader lives and the next call works."""
    client = started(fake("normal", timeout=1))
    with pytest.raises(McpError, match="no reply to tools/call within 1 s"):
        client.call_tool("deep", {})
    assert client.call_tool("echo", {"text": "alive"}) == "alive"
    assert "skipped a line that is not a JSON-RPC message" in capfd.readouterr().err


@pytest.mark.parametrize("line", [b'{"id": 1}\n', b' \t{"id": 1}\r\n', b'{"id": 1} \n', b'{"id": 1}{"id": 2}\n',
                                  b'[{"id": 1}]\n', b'{"id": 1} x\n', b'{"id": \n', b"\xff{}\n", b'"{}"\n'])
def test_a_line_is_read_as_json_reads_it(line):
    """The decoder's short way takes the lines json.loads takes, and skips the others."""
    from beyond.client.content import parse_message
    try:
        expected = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        expected = None
    message, complaint = parse_message(line)
    assert message == (expected if isinstance(expected, dict) else None)
    assert (complaint is None) == (message is not None and b"\xff" not in line)


def test_listing_is_bounded_in_bytes_over_all_pages(tmp_path):
    """A server whose tools/list pages go on with 2 MB each is refused once they pass the total, not at page 100."""
    from beyond.client import content
    status = connect(tmp_path, {"big": fake("endless_pages")})["big"]
    assert status.error and f"tools/list answered over {content.MAX_LISTED_BYTES >> 20} MB in its pages" in status.error
