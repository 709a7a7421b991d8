"""Sandboxed stdio servers (beyond/wire/sandbox.py): Landlock keeps a trusted server from the user's keys,
other folders and the network, its children too; where it cannot be enforced the server does not start.
The probes are tests/fakes/probe_server.py's; GEEKAGENT_LANDLOCK_ABI stands in for other kernels."""
import json
import socket
import sys

import pytest

from beyond.client.config import parse_server_config
from beyond.folder.question import what_runs
from beyond.wire import sandbox
from conftest import FAKES, agent_env, connect, fake, run_agent, workdir

REAL_ABI = sandbox.abi()
needs_landlock = pytest.mark.skipif(REAL_ABI < 4, reason=f"this kernel's Landlock ABI is {REAL_ABI}; 4 is needed")


def probe_entry(folder, **extra) -> dict:
    return {"command": sys.executable, "args": [str(FAKES / "probe_server.py"), str(folder)], **extra}


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A home with a planted key, a folder the server's args name, another folder, and a TCP listener."""
    home, named, other = tmp_path / "home", tmp_path / "named", tmp_path / "other"
    for folder in (home / ".ssh", named, other):
        folder.mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PLANTED KEY")
    monkeypatch.setenv("HOME", str(home))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    yield {"key": str(home / ".ssh" / "id_rsa"), "named": named, "other": other, "port": listener.getsockname()[1]}
    listener.close()


def probes(client, places) -> dict:
    call = lambda **args: client.call_tool("probe", args)  # noqa: E731
    return {"key": call(op="read", path=places["key"]), "child key": call(op="child_read", path=places["key"]),
            "write named": call(op="write", path=str(places["named"] / "f")),
            "write other": call(op="write", path=str(places["other"] / "f")),
            "connect": call(op="connect", port=places["port"]), "system": call(op="read", path="/etc/passwd")}


@needs_landlock
def test_a_sandboxed_server_reaches_only_what_it_may(started, places):
    confined = probes(started(probe_entry(places["named"], sandbox=True)), places)
    refused = {name for name, said in confined.items() if said.startswith("refused")}
    assert refused == {"key", "child key", "write other", "connect"}, confined
    assert confined["write named"] == "ok written" and confined["system"].startswith("ok ")
    networked = probes(started(probe_entry(places["named"], sandbox={"network": True})), places)
    assert networked["connect"] == "ok connected" and networked["key"].startswith("refused")


def test_unsandboxed_the_same_probes_succeed(started, places):
    free = probes(started(probe_entry(places["named"])), places)
    assert all(said.startswith("ok") for said in free.values()), free


@pytest.mark.parametrize("offered, asked, said", [
    ("0", True, "this system offers no Landlock"),
    ("3", True, "cannot refuse TCP (ABI 4")])
def test_where_the_sandbox_cannot_hold_the_server_does_not_start_and_the_others_do(tmp_path, monkeypatch,
                                                                                  offered, asked, said):
    monkeypatch.setenv("GEEKAGENT_LANDLOCK_ABI", offered)
    statuses = connect(tmp_path, {"boxed": probe_entry(tmp_path, sandbox=asked), "plain": fake("normal")})
    error = statuses["boxed"].error
    assert said in error and '"sandbox": false in its entry runs it unconfined' in error
    assert statuses["plain"].error is None and statuses["plain"].tools


def test_the_trust_question_and_mcp_say_how_a_server_is_confined(tmp_path):
    boxed = parse_server_config("s", {"command": "srv", "sandbox": {"write": ["out"], "network": True}})
    assert what_runs(boxed).endswith("sandboxed: writes out and a temporary folder; network")
    assert what_runs(parse_server_config("s", {"command": "srv", "sandbox": False})).endswith("; not sandboxed")
    assert "sandbox" not in what_runs(parse_server_config("s", {"command": "srv"}))
    for bad in ({"write": "out"}, {"network": "yes"}, {"writes": []}):
        with pytest.raises(Exception, match='"sandbox" must be true, false or'):
            parse_server_config("s", {"command": "srv", "sandbox": bad})
    cwd = workdir(tmp_path, {"probe": probe_entry(tmp_path), "free": {**probe_entry(tmp_path), "sandbox": False}},
                  {"mcp_probe_probe": "allow", "mcp_free_probe": "allow"})
    call = '{"op": "read", "path": "/etc/hostname"}'
    done = run_agent(cwd, ["/mcp probe", "/mcp free", f"/call mcp_probe_probe {call}", f"/call mcp_free_probe {call}",
                           "/exit"], agent_env(key=None), args=("--sandbox",))
    audited = [json.loads(line) for line in (cwd / ".geekagent" / "audit.jsonl").read_text().splitlines()]
    expected = ["sandboxed: wr", "not sandboxed"] if REAL_ABI >= 4 else ["not sandboxed"]  # else it did not start
    assert [entry.get("sandbox", "")[:13] for entry in audited] == expected
    probe, free = done.stdout.split("> probe (1 tool)")[1].split("> free (1 tool)")
    if REAL_ABI >= 4:  # --sandbox confines the entry that says nothing, not the one that says false
        assert "\n  sandboxed: writes the folders its args and roots name and a temporary folder; no network\n" in probe
    assert "\n  not sandboxed\n" in free


def test_sandbox_is_a_flag_of_the_full_agent():
    from beyond.repl.options import UsageError, parse
    assert parse(["--sandbox"]).sandbox and not parse([]).sandbox
    with pytest.raises(UsageError, match="--sandbox confines the full agent's servers"):
        parse(["--sandbox", "--tutorial"])
