"""The walls of a sandboxed server (wire/walls.py, inside.py, confine.py), each tried by a real probe server
(tests/fakes/probe_server.py) started by an agent of its own (tests/fakes/boxed_agent.py) in a temporary
home and project with secrets planted, as root and as an unprivileged user (uid 65534, who owns them), with
namespaces and with Landlock alone (GEEKAGENT_NAMESPACES=0), at every Landlock ABI from 1 to this kernel's
(GEEKAGENT_LANDLOCK_ABI). Each wall and its test:

Confidentiality (holds, or the server does not start and says why) - test_every_wall_on_every_abi:
  the project's .env and a .git/config holding a token, unreadable with the project granted, and named
  in the question; a key file holding a private key too (a CA bundle stays readable); ~/.ssh/id_rsa;
  another process's command line (a token in its args); a key in the user's keyring; as root, /etc/shadow.
  Without network below ABI 4 the server does not start, and says so.
Integrity (holds, or the server does not start) - test_every_wall_on_every_abi:
  chmod of ~/.ssh/id_rsa, fchmod of a file it may only read, truncating ~/.bashrc or opening a file it may
  only read with O_TRUNC, creating .git/hooks/pre-commit, .git/commondir or .envrc, all refused and the
  files as they were; the project's own files stay readable and writable. Without namespaces below ABI 3
  the server does not start, and says why.
Availability (holds, or the question says it does not) - test_every_wall_on_every_abi:
  signalling the agent; how many processes it starts (bounded but as root, where the question says so).
Grants from files a folder controls - test_a_link_on_the_hashbang_line_and_a_venvs_home_grant_nothing:
  an `env -S` link on a script's #! line, a pyvenv.cfg whose home leads to ~/.ssh.
Secrets that hide, and args naming secrets - test_secrets_are_found_where_they_hide_and_args_grant_none.
Named folders - test_naming_a_folder_grants_not_the_git_and_secrets_it_holds.
A secret in args - test_a_secret_in_args_is_announced; a refusal during a call named with its grant -
  test_a_refusal_during_a_call_is_named_with_its_grant; a "write" folder not there yet -
  test_a_write_grant_makes_its_folder.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from beyond.client.config import parse_server_config
from beyond.wire import sandbox, walls
from conftest import FAKES, wait_until

REAL_ABI = sandbox.abi()
PROBE = str(FAKES / "probe_server.py")
BOXED_AGENT = str(FAKES / "boxed_agent.py")
NOBODY = 65534
GIT_CONFIG = '[remote "origin"]\n\turl = https://me:ghp_PLANTEDtoken0123456789abcdef@github.com/me/repo.git\n'
# What each probe tries, and whether the sandbox must refuse it (None: an availability wall, judged apart).
PROBES = [("read .env", "read", {"path": ".env"}, True),
          ("read .git/config", "read", {"path": ".git/config"}, True),
          ("read server.key", "read", {"path": "server.key"}, True),
          ("read ~/.ssh/id_rsa", "read", {"path": "HOME/.ssh/id_rsa"}, True),
          ("read another's args", "read", {"path": "/proc/{other}/cmdline"}, True),
          ("read the keyring", "keyring", {"port": "{key}"}, True),
          ("read /etc/shadow", "read", {"path": "/etc/shadow"}, True),
          ("chmod ~/.ssh/id_rsa", "chmod", {"path": "HOME/.ssh/id_rsa"}, True),
          ("fchmod ~/notes.txt, read only", "fchmod", {"path": "HOME/notes.txt"}, True),
          ("truncate ~/.bashrc", "truncate", {"path": "HOME/.bashrc"}, True),
          ("open ~/notes.txt with O_TRUNC", "open_trunc", {"path": "HOME/notes.txt"}, True),
          ("create .git/commondir", "write", {"path": ".git/commondir"}, True),
          ("create .git/hooks/pre-commit", "write", {"path": ".git/hooks/pre-commit"}, True),
          ("create .envrc", "write", {"path": ".envrc"}, True),
          ("read src/deep/.env", "read", {"path": "src/deep/.env"}, True),
          ("read svc/.env, beside a pyvenv.cfg", "read", {"path": "svc/.env"}, True),
          ("read a bare repository's config", "read", {"path": "mirror.git/config"}, True),
          ("create a bare repository's hook", "write", {"path": "mirror.git/hooks/post-update"}, True),
          ("read a PGP key", "read", {"path": "private.key"}, True),
          ("io_uring_setup", "syscall", {"port": 425}, True),
          ("create src/deep/pyvenv.cfg", "write", {"path": "src/deep/pyvenv.cfg"}, True),
          ("rename src/deep", "rename", {"path": "src/deep"}, True),
          ("read ca.pem", "read", {"path": "ca.pem"}, False),
          ("read src/a.py", "read", {"path": "src/a.py"}, False),
          ("write src/a.py", "write", {"path": "src/a.py"}, False),
          ("write lib/new.py", "write", {"path": "lib/new.py"}, False),
          ("signal the agent", "signal", {"port": "{agent}"}, None)]


def python_for(uid: int | None) -> str:
    """A Python 3.10+ the user may run: this one, or the system's (a root-only home may hold this one)."""
    for python in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        try:
            done = subprocess.run([python, "-c", "import sys; assert sys.version_info >= (3, 10)"], timeout=30,
                                  user=uid, group=uid, extra_groups=[] if uid is not None else None,
                                  capture_output=True)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return python
    pytest.fail(f"no Python 3.10 or later here that uid {uid} may run: the walls cannot be tried as that user")


@pytest.fixture(params=["root", "nobody"])
def world(request):
    """A home (~/.ssh/id_rsa, ~/.bashrc) and a project (.geekagent/, .env, a .git/config with a token, a key
    file, a CA bundle, src/a.py), owned by the user the agent runs as; removed afterwards."""
    if request.param == "nobody" and os.geteuid() != 0:
        pytest.skip("this user is not root: the tests as root already ran as an unprivileged user")
    uid = NOBODY if request.param == "nobody" else None
    top = Path(tempfile.mkdtemp(prefix="geekagent-walls-"))
    home, project = top / "home", top / "project"
    files = {home / ".ssh" / "id_rsa": "PLANTED-SSH", home / ".bashrc": "PLANTED-BASHRC", home / "notes.txt": "NOTES",
             project / ".env": "OPENAI_API_KEY=sk-PLANTED", project / ".git" / "config": GIT_CONFIG,
             project / "server.key": "-----BEGIN PRIVATE KEY-----\nPLANTED\n",
             project / "ca.pem": "-----BEGIN CERTIFICATE-----\nPUBLIC\n", project / "src" / "a.py": "print(1)\n",
             project / "src" / "deep" / ".env": "TOKEN=PLANTED-DEEP",
             project / "svc" / "pyvenv.cfg": "home = /usr/bin\n",
             project / "svc" / ".env": "TOKEN=PLANTED-SVC", project / "mirror.git" / "HEAD": "ref: refs/heads/main\n",
             project / "mirror.git" / "config": GIT_CONFIG,
             project / "private.key": "-----BEGIN PGP PRIVATE KEY BLOCK-----\nPLANTED\n"}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in (project / ".geekagent", project / ".git" / "hooks", project / "lib", top / "tmp",
                   *(project / "mirror.git" / name for name in ("objects", "refs", "hooks"))):
        folder.mkdir()
    (home / ".ssh" / "id_rsa").chmod(0o600)
    if uid is not None:
        for folder, _, names in os.walk(top):
            for path in [folder, *(os.path.join(folder, name) for name in names)]:
                os.chown(path, uid, uid)
    yield {"uid": uid, "home": str(home), "project": str(project), "python": python_for(uid), "files": files,
           "tmp": str(top / "tmp")}
    shutil.rmtree(top)


def drive(world: dict, runs: list[tuple[int, str]], entries: dict, namespaces: bool) -> list[dict]:
    """Run the agent of its own (boxed_agent.py): each (ABI, entry) started, probed and stopped; what it said."""
    probes = [[op, {key: value.replace("HOME", world["home"]) if isinstance(value, str) else value
                    for key, value in args.items()}]
              for _, op, args, _ in PROBES]
    asked = {"uid": world["uid"], "home": world["home"], "project": world["project"], "runs": runs,
             "entries": entries, "probes": probes}
    env = {"PATH": os.environ["PATH"], "TMPDIR": world["tmp"], **({} if namespaces else {"GEEKAGENT_NAMESPACES": "0"})}
    done = subprocess.run([world["python"], BOXED_AGENT, json.dumps(asked)], capture_output=True, text=True,
                          timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "landlock-only"])
def test_every_wall_on_every_abi(world, namespaces):
    if REAL_ABI < 1:
        pytest.fail("this kernel offers no Landlock: no sandboxed server starts here, so no wall can be tried")
    if namespaces and not walls.namespaces():
        pytest.fail("this user may not make namespaces of its own here; the walls with them cannot be tried")
    entry, notes = {"command": world["python"], "args": [PROBE, world["project"]]}, f"{world['home']}/notes.txt"
    entries = {"boxed": {**entry, "sandbox": {"read": [notes]}},
               "networked": {**entry, "sandbox": {"network": True, "read": [notes]}}}
    # Below ABI 4 the network cannot be refused: without it the server does not start, with it the rest holds.
    asked = [(abi, name) for abi in range(1, REAL_ABI + 1) for name in entries if abi < 4 or name == "boxed"]
    runs = drive(world, asked, entries, namespaces)
    assert [(run["abi"], run["entry"]) for run in runs] == asked
    for run in runs:
        where = f"ABI {run['abi']}, {run['entry']}, {'with' if namespaces else 'without'} namespaces"
        if run["abi"] < 3 and not namespaces:  # O_TRUNC needs no right there: only namespaces would hold
            assert "cannot keep it from emptying files it may read" in run["error"], (where, run)
            assert "sandboxed, cannot start: " in run["question"], (where, run)
            continue
        if run["entry"] == "boxed" and run["abi"] < 4:  # no TCP rights: only with network may it start
            assert "cannot refuse TCP" in run["error"] and "cannot start" not in run["question"], (where, run)
            continue
        assert run["error"] == "", (where, run)
        answers = dict(zip([name for name, *_ in PROBES], run["answers"]))
        for name, _, _, refuse in PROBES:
            if refuse is not None:
                assert answers[name].startswith(("refused", "errno")) == refuse, (where, name, answers[name])
        question = run["question"]
        kept = ".env, .git/config, mirror.git/config, private.key, server.key, src/deep/.env, svc/.env"
        assert f"{world['project']} (not {kept};" in question, (where, question)
        signalled = answers["signal the agent"] == "ok signalled"
        assert signalled == ("it can signal your processes" in question), (where, answers, question)
        assert signalled == (run["abi"] < 6 and not namespaces), (where, answers)
        assert ("as root, how many processes it starts is unbounded" in question) == (world["uid"] is None)
    files = world["files"]
    home, project = Path(world["home"]), Path(world["project"])
    assert stat.S_IMODE(os.stat(home / ".ssh" / "id_rsa").st_mode) == 0o600
    assert all(path.read_text() == text for path, text in files.items() if path.name != "a.py"), "a file changed"
    assert not (project / ".envrc").exists() and not (project / ".git" / "hooks" / "pre-commit").exists()
    assert os.listdir(world["tmp"]) == [], "a server's temporary folder was left behind"


def test_a_link_on_the_hashbang_line_and_a_venvs_home_grant_nothing(tmp_path, monkeypatch):
    """A script whose #! line says `env -S python3` beside a link named -S to the agent's own tokens, a
    pyvenv.cfg whose home is ../.ssh/bin, and a bin/node that would make the project a runtime: the question
    grants neither the tokens nor ~/.ssh nor the project's .env, and the server, started, reads none."""
    home, project = tmp_path / "home", tmp_path / "home" / "proj"
    (home / ".ssh" / "bin").mkdir(parents=True)
    (home / ".ssh" / "bin" / "python3").write_text("#!/bin/sh\n")
    (home / ".ssh" / "id_rsa").write_text("PLANTED")
    tokens = home / ".local" / "state" / "geekagent" / "oauth.json"
    tokens.parent.mkdir(parents=True)
    tokens.write_text('{"PLANTED": 1}')
    (project / ".geekagent").mkdir(parents=True)
    (project / "-S").symlink_to(tokens)
    (project / "run").write_text(f"#!/usr/bin/env -S python3\n{Path(PROBE).read_text()}")
    (project / "run").chmod(0o755)
    (project / "venv" / "bin").mkdir(parents=True)
    (project / "venv" / "pyvenv.cfg").write_text("home = ../../.ssh/bin\n")
    (project / "venv" / "bin" / "server").write_text(f"#!{sys.executable}\n{Path(PROBE).read_text()}")
    (project / "venv" / "bin" / "server").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    for variable in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    (project / "bin").mkdir()
    (project / "bin" / "node").write_text("")  # makes the project no runtime, granted whole
    (project / "bin" / "server").write_text(f"#!{sys.executable}\n{Path(PROBE).read_text()}")
    (project / "bin" / "server").chmod(0o755)
    (project / ".env").write_text("OPENAI_API_KEY=sk-PLANTED")
    monkeypatch.chdir(project)
    said = sandbox.what_it_may(parse_server_config("s", {"command": "bin/server", "sandbox": True}))
    assert "~/proj (not .env)" in said, said
    for command in ("./run", "./venv/bin/server"):
        said = sandbox.what_it_may(parse_server_config("s", {"command": command, "sandbox": True}))
        assert "oauth.json" not in said and "~/.ssh" not in said and "~/.local" not in said, said
        assert not said.startswith("sandboxed, cannot start"), said
    from beyond_mcp import McpClient
    client = McpClient("s", {"command": "bin/server", "sandbox": True})
    client.start()
    try:
        for path in (home / ".ssh" / "id_rsa", tokens, project / ".env"):
            assert client.call_tool("probe", {"op": "read", "path": str(path)}).startswith("refused"), path
    finally:
        client.stop()


def test_secrets_are_found_where_they_hide_and_args_grant_none(tmp_path, monkeypatch):
    """A token as an https URL's user name, a submodule's config with a header, a key after a certificate
    chain: each kept out of a granted folder; a CA bundle stays readable. A folder or file of secrets named in
    args or roots is refused (a "read" grants it by name)."""
    from beyond.wire.inside import Inside
    token = "ghp_0123456789abcdefghij0123456789abcdef"
    files = {".git/config": f'[remote "o"]\n\turl = https://{token}@github.com/a/b\n',
             ".git/modules/lib/config": '[http]\n\textraHeader = AUTHORIZATION: basic eDp5\n',
             "certs/full.pem": "-----BEGIN CERTIFICATE-----\n" + "A" * 8000 + "\n-----BEGIN PRIVATE KEY-----\nK\n",
             "certs/ca.pem": "-----BEGIN CERTIFICATE-----\n" + "A" * 8000 + "\n",
             "lib/.git": "gitdir: ../.git/modules/lib\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    inside = Inside()
    inside.look(str(tmp_path), True, set())
    assert {os.path.relpath(p, tmp_path) for p in inside.out} == {".git/config", ".git/modules/lib/config",
                                                                   "certs/full.pem"}
    assert {os.path.relpath(p, tmp_path) for p in inside.readonly} == {".git", "lib/.git"}
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "id_rsa").write_text("PLANTED")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for named in (["~/.ssh"], ["~/.ssh/id_rsa"]):
        for entry in ({"args": named}, {"roots": named}):
            said = sandbox.what_it_may(parse_server_config("s", {"command": sys.executable, "sandbox": True, **entry}))
            assert "holds your secrets" in said and ", ~/.ssh" not in said.split("; refused")[0], said


def test_naming_a_folder_grants_not_the_git_and_secrets_it_holds(tmp_path, monkeypatch, started):
    """"write": ["sub"] where sub holds a repository and a .env, and "write": ["."] for the project a
    .geekagent/ makes readable: both written, neither's .git nor .env granted; "write" naming a file is
    refused with why (a grant writes folders), and "read" naming .env grants it."""
    needs_landlock()
    project = tmp_path / "p"
    for path, text in {"sub/.git/HEAD": "ref: refs/heads/main\n", "sub/.env": "A=PLANTED", ".env": "B=PLANTED",
                       "sub/a.txt": "a", "notes.txt": "n"}.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text)
    (project / "sub" / ".git" / "hooks").mkdir()
    (project / ".geekagent").mkdir()
    monkeypatch.chdir(project)
    config = {"command": sys.executable, "args": [PROBE], "sandbox": {"write": ["sub", ".", "notes.txt"]}}
    said = sandbox.what_it_may(parse_server_config("s", config))
    assert f"writes {project}/sub (not .env; .git read only" in said and f"{project} (not .env" in said, said
    assert "notes.txt (named by \"sandbox\".write): a file; a grant to write names its folder" in said, said
    client = started(config)
    answers = [client.call_tool("probe", {"op": op, "path": str(project / path)}) for op, path in (
        ("write", "sub/.git/hooks/pre-commit"), ("read", "sub/.env"), ("read", ".env"), ("write", "sub/a.txt"))]
    assert [answer.startswith("refused") for answer in answers] == [True, True, True, False], answers
    named = started({**config, "sandbox": {"read": [".env"]}}, name="named")
    assert named.call_tool("probe", {"op": "read", "path": str(project / ".env")}) == "ok B=PLANTED"


def test_a_secret_in_args_is_announced(monkeypatch):
    """A secret a command line would hold, which every process here may read: a ${VAR} of a secret's name
    or value, or one written there after a secret's flag, is said in the question; a plain ${HOME} is not."""
    from beyond.folder.question import what_runs
    monkeypatch.setenv("GH_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwxyz")
    said = what_runs(parse_server_config("gh", {"command": "gh-mcp", "args": ["--token", "${GH_TOKEN}"]}))
    assert "GH_TOKEN in args is visible to every process on this machine: pass it in env" in said, said
    written = what_runs(parse_server_config("x", {"command": "x", "args": ["--api-key=abcdefgh12345678"]}))
    assert "args[0] (after --api-key) is visible to every process on this machine" in written, written
    assert "abcdefgh12345678" not in written
    plain = what_runs(parse_server_config("x", {"command": "x", "args": ["--root", "${HOME}"]}))
    assert "visible to every process" not in plain, plain


def needs_landlock() -> None:
    if REAL_ABI < 4:
        pytest.fail(f"this kernel's Landlock ABI is {REAL_ABI}: a sandboxed server without network needs 4")


def test_a_refusal_during_a_call_is_named_with_its_grant(tmp_path, monkeypatch, started):
    """A call that fails on what the sandbox refused says which grant allows it, and /logs says so too,
    as soon as the server's line is read."""
    needs_landlock()
    (tmp_path / "p" / ".geekagent").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    notes = tmp_path / "data" / "notes.txt"
    notes.write_text("notes")
    monkeypatch.chdir(tmp_path / "p")
    client = started({"command": sys.executable, "args": [PROBE], "sandbox": True})
    with pytest.raises(Exception) as failed:
        client.call_tool("probe", {"op": "fail", "path": str(notes)})
    hint = f'the sandbox refused {notes}: "sandbox": {{"read": ["{notes}"]}} grants it'
    assert hint in str(failed.value), str(failed.value)
    assert wait_until(lambda: any(hint in line for line in client.from_server.tail), 10), list(client.from_server.tail)


def test_a_write_grant_makes_its_folder(tmp_path, monkeypatch, started):
    """A "write" grant on a folder not there yet: the question says it is made, and the server writes in it."""
    needs_landlock()
    (tmp_path / "p" / ".geekagent").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "p")
    config = {"command": sys.executable, "args": [PROBE], "sandbox": {"write": [str(tmp_path / "out" / "logs")]}}
    said = sandbox.what_it_may(parse_server_config("s", config))
    assert f"writes {tmp_path / 'out' / 'logs'} (made as it starts)" in said, said
    client = started(config)
    assert client.call_tool("probe", {"op": "write", "path": str(tmp_path / "out" / "logs" / "a.log")}) == "ok written"
