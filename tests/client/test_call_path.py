"""One tool call's path through the full client, counted: the functions of day15/ a call_tool enters, on
every thread (the reader's too), and the files they are in. A short path is one a reader can follow."""
import sys
import threading

import beyond_mcp
from conftest import DAY15, ROOT

# At most this many functions (distinct code objects: lambdas and generator bodies count, comprehensions
# are inlined) in at most this many files, from call_tool to the pipe and back.
MAX_FUNCTIONS, MAX_FILES = 20, 6


def test_one_call_enters_few_functions_in_few_files():
    entered, counting = set(), threading.Event()

    def profile(frame, event, arg):
        if event == "call" and counting.is_set() and frame.f_code.co_filename.startswith(str(DAY15)):
            entered.add((frame.f_code.co_filename, frame.f_code.co_firstlineno, frame.f_code.co_name))
    threading.setprofile(profile)  # before the server starts: its reader thread is profiled too
    sys.setprofile(profile)
    client = beyond_mcp.McpClient("echo", {"command": sys.executable,
                                           "args": [str(ROOT / "tests" / "bench" / "echo_server.py")]})
    try:
        client.start()
        assert client.call_tool("echo", {"text": "warm"}) == "warm"
        counting.set()
        assert client.call_tool("echo", {"text": "hello"}) == "hello"
        counting.clear()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        client.stop()
    files = {path for path, _, _ in entered}
    shown = sorted(f"{path[len(str(DAY15)) + 1:]}:{name}" for path, _, name in entered)
    assert len(entered) <= MAX_FUNCTIONS and len(files) <= MAX_FILES, shown
