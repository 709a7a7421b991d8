"""The agent's side of tests/wire/test_walls.py, run as a process of its own: as root, or (with "uid") dropped
to that user first (setgroups([]), setgid, setuid), as a user runs the agent. argv[1] is JSON:

  {"uid": null or N, "home": ..., "project": ..., "runs": [[ABI, label]...], "entries": {label: entry},
   "probes": [[op, args]...]}

It plants what the probes go for: a key in the user's keyring and a process holding a secret in its args.
Then, for each run (an ABI, GEEKAGENT_LANDLOCK_ABI, and an entry), it prints one JSON line: {"abi", "entry",
"question" (the trust question's line), "error" (why it did not start, or ""), "answers"}. In a probe's
args "{key}", "{other}" and "{agent}" stand for the key's number, that process's pid and its own.
"""
import ctypes
import json
import os
import subprocess
import sys

ASKED = json.loads(sys.argv[1])
if ASKED["uid"] is not None:
    os.setgroups([])
    os.setgid(ASKED["uid"])
    os.setuid(ASKED["uid"])
os.environ.update(HOME=ASKED["home"], XDG_CONFIG_HOME=f"{ASKED['home']}/.config",
                  XDG_STATE_HOME=f"{ASKED['home']}/.local/state", XDG_CACHE_HOME=f"{ASKED['home']}/.cache")
os.chdir(ASKED["project"])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "day15"))

from beyond.client.config import parse_server_config  # noqa: E402 (after the user and the home are set)
from beyond.client.session import Session  # noqa: E402
from beyond.folder.question import what_runs  # noqa: E402
from mcp import McpError  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, USER_KEYRING = (248 if os.uname().machine == "x86_64" else 217), -4
key = libc.syscall(ADD_KEY, b"user", b"geekagent-walls", b"PLANTED-KEY", 11, ctypes.c_long(USER_KEYRING))
other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", "--token=PLANTED-ARG"],
                         stdin=subprocess.PIPE)
ids = {"{key}": key, "{other}": other.pid, "{agent}": os.getpid()}
try:
    for abi, label in ASKED["runs"]:
        os.environ["GEEKAGENT_LANDLOCK_ABI"] = str(abi)
        config = parse_server_config(label, ASKED["entries"][label])
        said = {"abi": abi, "entry": label, "question": what_runs(config), "error": "", "answers": []}
        session = Session(label, config)
        try:
            session.start()
            for op, args in ASKED["probes"]:
                args = {name: ids.get(value, value) for name, value in args.items()}
                said["answers"].append(session.call_tool("probe", {"op": op, **args}))
        except McpError as e:
            said["error"] = str(e)
        finally:
            session.stop()
        print(json.dumps(said), flush=True)
finally:
    other.stdin.close()
    other.wait(10)
