"""The full agent's built-in `read` by pages (beyond/servers/reading.py): bounded in lines and bytes, regular
files only, an offset past the end answered at once."""
import json
import os
import threading

import tools
from beyond.servers import reading, toolset
from beyond.servers.calls import Calls


def register_read(root) -> None:
    """The built-ins, `read` replaced by the full agent's (as agent.py does), allowed as the defaults say."""
    tools.register_builtin_tools(str(root))
    toolset.replace_builtin(reading.read_tool(str(root)))


def run_tool(name: str, arguments_json: str) -> str:
    return Calls().run(name, arguments_json)


def test_read_is_bounded_in_bytes_and_refuses_a_fifo(tmp_path):
    """A one-line 1 MB file gives a 64 KB page; a FIFO is refused instead of blocking."""
    (tmp_path / "one-line.txt").write_text("z" * 1_000_000)
    os.mkfifo(tmp_path / "pipe")
    register_read(tmp_path)
    page = run_tool("read", '{"path": "one-line.txt"}')
    assert page.startswith("z" * 1000) and len(page) < 70_000 and "longer than 65,536 bytes" in page
    assert "not a regular file" in run_tool("read", '{"path": "pipe"}')

def test_read_pages_long_files(tmp_path):
    """read returns one page and says how to get the next."""
    (tmp_path / "long.txt").write_text("".join(f"{i}\n" for i in range(450)))
    register_read(tmp_path)
    first = run_tool("read", '{"path": "long.txt"}')
    assert first.splitlines()[0] == "0" and "more follows; call read with offset 200" in first
    assert run_tool("read", '{"path": "long.txt", "offset": 400}').splitlines()[-1] == "449"

def test_read_past_the_end_answers_at_once(tmp_path):
    """An offset of 1e11 lines is answered at once, without reading or looping; one past the last line too."""
    (tmp_path / "small.txt").write_text("one\ntwo\n")
    register_read(tmp_path)
    results = []
    worker = threading.Thread(target=lambda: results.extend(
        run_tool("read", json.dumps({"path": "small.txt", "offset": offset})) for offset in (10**11, 2, 3)),
        daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and len(results) == 3
    assert "past the end" in results[0] and "8 bytes" in results[0]
    assert "past the end" in results[2] and "2 lines" in results[2]
