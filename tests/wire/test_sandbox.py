"""Sandboxed stdio servers (beyond/wire/sandbox.py, confine.py), tried as an attacker would: a temporary home
holds a key, ~/.npmrc and npm's and uv's caches, and one probe server (tests/fakes/probe_server.py) per way
in tries to reach them. Each is refused when it runs; unsandboxed, the same probes succeed. Where the sandbox
cannot hold, the server does not start. GEEKAGENT_LANDLOCK_ABI stands in for other kernels."""
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from types import SimpleNamespace

import pytest

from beyond.client.config import parse_server_config
from beyond.wire import sandbox
from conftest import DAY15, FAKES, AGENT, agent_env, connect, fake, run_agent, wait_for_output, workdir

REAL_ABI = sandbox.abi()
needs_landlock = pytest.mark.skipif(REAL_ABI < 6, reason=f"this kernel's Landlock ABI is {REAL_ABI}; 6 is needed")
PROBE = str(FAKES / "probe_server.py")


@pytest.fixture
def place(tmp_path, monkeypatch):
    """A home with a key, ~/.npmrc and npm's and uv's caches; a project outside it; TCP, UDP and unix listeners."""
    home, project, other = tmp_path / "home", tmp_path / "project", tmp_path / "other"
    for folder in (home / ".ssh", home / ".npm", home / ".cache" / "uv", project / ".geekagent", other):
        folder.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PLANTED KEY")
    (home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=PLANTED")
    monkeypatch.setenv("HOME", str(home))
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "GEEKAGENT_LANDLOCK_ABI"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(project)
    tcp, udp, unix = socket.socket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM), socket.socket(socket.AF_UNIX)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp.bind(("127.0.0.1", 0))
    unix.bind(str(tmp_path / "agent.sock"))  # as an ssh-agent's or D-Bus's socket
    unix.listen()
    terminal = os.openpty()  # as the user's terminal: its /dev/pts/N
    yield SimpleNamespace(home=home, project=project, other=other, key=str(home / ".ssh" / "id_ed25519"),
                          tcp=tcp.getsockname()[1], udp=udp.getsockname()[1], unix=str(tmp_path / "agent.sock"),
                          terminal=os.ttyname(terminal[1]))
    for listener in (tcp, udp, unix):
        listener.close()
    for fd in terminal:
        os.close(fd)


def entry(*args, **extra) -> dict:
    return {"command": sys.executable, "args": [PROBE, *map(str, args)], **extra}


def probe(client, op: str, **args) -> str:
    return client.call_tool("probe", {"op": op, **args})


def attacks(client, place) -> dict:
    """Every way out the probe tries: the user's files, the agent's environment, the network."""
    home = place.home
    return {"key": probe(client, "read", path=place.key), "child key": probe(client, "child_read", path=place.key),
            "npmrc": probe(client, "read", path=str(home / ".npmrc")),
            "npm cache": probe(client, "write", path=str(home / ".npm" / "planted")),
            "uv cache": probe(client, "write", path=str(home / ".cache" / "uv" / "planted")),
            "home": probe(client, "write", path=str(home / "planted")),
            "other": probe(client, "write", path=str(place.other / "planted")),
            "agent environ": probe(client, "read", path=f"/proc/{os.getpid()}/environ"),
            "terminal": probe(client, "open", path=place.terminal),
            "tcp": probe(client, "connect", port=place.tcp), "udp": probe(client, "udp", port=place.udp),
            "unix": probe(client, "unix", path=place.unix)}


def refused(said: dict) -> set:
    return {what for what, answer in said.items() if answer.startswith("refused")}


@needs_landlock
def test_a_sandboxed_server_reaches_nothing_of_the_users(started, place):
    """With "sandbox": true every probe fails; the system stays readable, socketpair works, and it has no
    capability left (CapEff, CapPrm, CapBnd and CapAmb 0), root or not."""
    client = started(entry(sandbox=True))
    said = attacks(client, place)
    assert refused(said) == set(said), said
    assert probe(client, "read", path="/etc/hostname").startswith("ok")
    assert probe(client, "socketpair") == "ok paired"
    if platform.machine() == "x86_64":  # io_uring_setup, and socket() by x32's number: refused by the filter
        assert [probe(client, "syscall", port=nr) for nr in (425, 41 | 0x40000000)] == ["errno 13"] * 2
    assert probe(client, "caps") == "ok CapPrm:0000000000000000 CapEff:0000000000000000 " \
                                    "CapBnd:0000000000000000 CapAmb:0000000000000000"


def test_unsandboxed_the_same_probes_succeed(started, place):
    said = attacks(started(entry()), place)
    assert not refused(said), said


@needs_landlock
def test_sandbox_confines_even_an_entry_that_says_false_and_the_audit_and_mcp_say_so(tmp_path, own_user_dirs):
    """--sandbox: the entry that says nothing and the one that says false both run confined; /mcp shows each
    one's grants and the refusal, and the audit records how each call's server ran."""
    cwd = workdir(tmp_path / "p", {"probe": entry(), "free": entry(sandbox=False)},
                  {"mcp_probe_probe": "allow", "mcp_free_probe": "allow"})
    key = own_user_dirs / "planted-key"
    key.write_text("PLANTED")
    call = json.dumps({"op": "read", "path": str(key)})
    done = run_agent(cwd, ["/mcp probe", "/mcp free", f"/call mcp_probe_probe {call}", f"/call mcp_free_probe {call}",
                           "/exit"], agent_env(key=None), args=("--sandbox",))
    audited = [json.loads(line) for line in (cwd / ".geekagent" / "audit.jsonl").read_text().splitlines()]
    assert [entry["sandbox"][:17] for entry in audited] == ["sandboxed: reads "] * 2, audited
    assert "PLANTED" not in done.stdout and done.stdout.count("refused: Permission denied") == 2, done.stdout
    assert "refused: its entry says \"sandbox\": false; --sandbox confines it all the same" in done.stdout


@needs_landlock
@pytest.mark.parametrize("how", ["read", "roots", "args link", "args file link", "program in home",
                                 "script in a project", "project is home"])
def test_what_would_grant_the_home_is_refused_and_named(started, place, monkeypatch, how):
    """`"read": ["~"]`, `"roots": ["~"]`, a project link to /, a script in ~/bin, and a start in ~ itself:
    the question names each refusal, and the key stays out of reach."""
    config = entry(sandbox=True)
    if how == "read":
        config["sandbox"] = {"read": ["~"]}
    elif how == "roots":
        config["roots"] = ["~"]
    elif how == "args link":
        (place.project / "data").symlink_to("/")
        config["args"].append("data")
    elif how == "args file link":
        (place.project / "key").symlink_to(place.key)
        config["args"].append("key")
    elif how == "program in home":  # a script in ~/bin: the file is granted, not ~/bin, nor ~ above it
        (place.home / "bin").mkdir()
        config = {"command": str(place.home / "bin" / "server.py"), "sandbox": True}
        (place.home / "bin" / "server.py").write_text(f"#!{sys.executable}\n" + open(PROBE).read())
        (place.home / "bin" / "server.py").chmod(0o755)
    elif how == "script in a project":  # ./server.py at the top of ~/proj: the project, not the home above it
        (place.home / "proj" / ".geekagent").mkdir(parents=True)
        (place.home / "proj" / "server.py").write_text(f"#!{sys.executable}\n" + open(PROBE).read())
        (place.home / "proj" / "server.py").chmod(0o755)
        monkeypatch.chdir(place.home / "proj")
        config = {"command": "./server.py", "sandbox": True}
    else:
        (place.home / ".geekagent").mkdir()
        monkeypatch.chdir(place.home)
    said = sandbox.what_it_may(parse_server_config("probe", config))
    if how == "program in home":
        assert "reads ~/bin/server.py" in said and "~/bin," not in said and "refused" not in said, said
    elif how == "script in a project":
        assert said.split("; writes")[0].endswith(", ~/proj") and "refused" not in said, said
    else:
        why = {"args link": "a link out of the project, to /", "args file link": f"a link out of the project, to "
               f"{place.key}"}.get(how, "the home folder or a folder above it")
        assert "; refused: " in said and why in said, said
        assert not any(part.strip() in ("~", "/") for part in said.split("reads ")[1].split(";")[0].split(",")), said
    client = started(config)
    assert probe(client, "read", path=place.key).startswith("refused")
    assert probe(client, "write", path=str(place.home / "planted")).startswith("refused")


@needs_landlock
def test_the_entrys_own_env_does_not_reach_the_launcher(started, place):
    """GEEKAGENT_LANDLOCK_ABI=0 and LD_PRELOAD in the entry's env reach the server, not its launcher: the
    network stays refused; the launcher's environment is empty and its command line holds no value of it."""
    env = {"GEEKAGENT_LANDLOCK_ABI": "0", "LD_PRELOAD": "/nonexistent/preload.so", "GH_TOKEN": "ghp_planted"}
    config = parse_server_config("probe", entry(sandbox=True, env=env))
    launcher, launcher_env, handed, private = sandbox.wrapped(config, [sys.executable, PROBE], {**env, "PATH": "/bin"})
    shutil.rmtree(private)
    assert launcher_env == {} and "ghp_planted" not in " ".join(launcher) and b"ghp_planted" in handed
    client = started(entry(sandbox=True, env=env))
    assert probe(client, "connect", port=place.tcp).startswith("refused")
    assert probe(client, "udp", port=place.udp).startswith("refused")


@needs_landlock
def test_a_launcher_writes_only_its_own_cache(started, place, tmp_path, monkeypatch):
    """npx (here a probe named so) gets a cache of its own, writable; the user's npm and uv caches and
    ~/.npmrc stay out of reach unless the entry names ~/.npmrc, which the question then shows."""
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "npx").write_text(f"#!{sys.executable}\n" + open(PROBE).read())
    (bin_folder / "npx").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}:{os.environ['PATH']}")
    client = started({"command": "npx", "sandbox": True})
    own = probe(client, "env", path="npm_config_cache")
    assert own.startswith("ok ") and "/geekagent/sandbox/" in own, own
    assert probe(client, "write", path=own[3:] + "/x") == "ok written"
    said = attacks(client, place)
    assert {"npmrc", "npm cache", "uv cache", "key"} <= refused(said), said
    named = {"command": "npx", "sandbox": {"read": ["~/.npmrc"], "write": ["~/.npm"]}}
    shown = sandbox.what_it_may(parse_server_config("npx", named))
    assert ", ~/.npmrc," in shown.split("; writes")[0] and "its own npm cache" in shown, shown
    assert "refused: ~/.npm (named by \"sandbox\".write): npm's or uv's own cache" in shown, shown
    npmrc = probe(started(named), "read", path=str(place.home / ".npmrc"))
    assert npmrc == "ok //registry.npmjs.org/:_authToken=PLANTED"


@needs_landlock
def test_a_server_refused_at_start_says_what_would_grant_it(tmp_path, place):
    """mcp-server-git's case: a server that reads ~/.gitconfig as it starts fails, and says what to grant."""
    (place.home / ".gitconfig").write_text("[user]\n")
    reads = {"command": sys.executable, "args": ["-c", "open(__import__('os').path.expanduser('~/.gitconfig'))"]}
    error = connect(tmp_path, {"git": {**reads, "sandbox": True}})["git"].error
    assert "Permission denied" in error and '(the sandbox refused ~/.gitconfig: "sandbox": {"read": ' \
                                              '["~/.gitconfig"]} grants it, if you trust it)' in error, error


@needs_landlock
def test_a_proxy_reaches_only_a_server_with_network(started, place, monkeypatch):
    """A proxy's address (its password in it) is of no use without network: such a server gets no proxy or CA
    variable at all; one with network gets them, as an unsandboxed one does."""
    monkeypatch.setenv("HTTPS_PROXY", "http://u:p@proxy:3128")
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    offline, online = started(entry(sandbox=True)), started(entry(sandbox={"network": True}))
    assert [probe(offline, "env", path=name) for name in ("HTTPS_PROXY", "SSL_CERT_FILE")] == ["ok ", "ok "]
    assert probe(online, "env", path="HTTPS_PROXY") == "ok http://u:p@proxy:3128"
    assert probe(online, "env", path="SSL_CERT_FILE") == "ok /etc/ssl/certs/ca-certificates.crt"


@needs_landlock
def test_network_true_keeps_its_meaning(started, place):
    client = started(entry(sandbox={"network": True}))
    assert probe(client, "connect", port=place.tcp) == "ok connected"
    assert probe(client, "udp", port=place.udp) == "ok sent" and probe(client, "read", path=place.key).startswith("ref")


def test_a_process_without_capabilities_cannot_read_the_agents_environment(tmp_path):
    """The agent is not dumpable: a process of the same user without CAP_SYS_PTRACE, sandboxed or not,
    cannot read its /proc/<pid>/environ (the model's key is there). Both run without capabilities, so that
    as root too only the agent's dumpable flag decides."""
    without = ("import os, sys\nsys.path.insert(0, sys.argv[1])\nfrom beyond.wire.confine import drop_capabilities\n"
               "drop_capabilities()\n")
    agent = subprocess.Popen([sys.executable, "-c", without + "os.execv(sys.executable, [sys.executable, sys.argv[2]])",
                              str(DAY15), AGENT], cwd=workdir(tmp_path, {}), env=agent_env(key="sk-planted-key"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_output(agent, "Type a message")
        read = subprocess.run([sys.executable, "-c", without + "print(open(f'/proc/{sys.argv[2]}/environ').read())",
                               str(DAY15), str(agent.pid)], capture_output=True, text=True, timeout=30)
    finally:
        agent.kill()
        agent.communicate(timeout=30)
    assert "PermissionError" in read.stderr and "sk-planted-key" not in read.stdout, read


@pytest.mark.parametrize("offered, said", [("0", "this system offers no Landlock"), ("3", "cannot refuse TCP (ABI 4")])
def test_where_the_sandbox_cannot_hold_the_server_does_not_start_and_the_others_do(tmp_path, monkeypatch,
                                                                                  offered, said):
    monkeypatch.setenv("GEEKAGENT_LANDLOCK_ABI", offered)
    statuses = connect(tmp_path, {"boxed": entry(sandbox=True), "plain": fake("normal")})
    error = statuses["boxed"].error
    assert said in error and '"sandbox": false in its entry runs it unconfined' in error
    assert statuses["plain"].error is None and statuses["plain"].tools


def test_drop_capabilities_leaves_none():
    """What the launcher does last before exec, in a process of its own: no capability in any set."""
    done = subprocess.run([sys.executable, "-c", "import sys\nsys.path.insert(0, sys.argv[1])\n"
                           "from beyond.wire.confine import drop_capabilities, _capabilities\n"
                           "drop_capabilities()\nprint(sorted(set(_capabilities().values())))",
                           str(DAY15)], capture_output=True, text=True,
                          timeout=30)
    assert done.stdout.strip() == "[0]", done


def test_a_sandboxed_command_that_is_not_there_is_said_so_without_a_sandbox_hint(tmp_path):
    error = connect(tmp_path, {"gone": {"command": "no-such-program-here", "sandbox": True}})["gone"].error
    assert "cannot start server: no-such-program-here is not found on the server's PATH" in error
    assert '"sandbox": false' not in error
