"""What the trust question says of a sandboxed entry (wire/sandbox.py): every grant, resolved, and every
refusal, also for entries that --sandbox confines; trust and the `a` answers are bound to that grant set."""
import json
import os
import sys

from beyond.folder.approvals import runs_of
from beyond.folder.trust import Project, decide, summary
from conftest import FAKES, Asked, workdir

PROBE = str(FAKES / "probe_server.py")


def entry(**extra) -> dict:
    return {"command": sys.executable, "args": [PROBE], **extra}


def server_lines(project: Project) -> dict:
    return {line.split(":")[0].split()[-1]: line for line in summary(project) if line.startswith("  server ")}


def test_entries_that_sandbox_confines_show_their_grants_and_a_false_is_refused(tmp_path, monkeypatch):
    """Under --sandbox the question shows what each stdio entry may reach, and that an entry's
    "sandbox": false was refused; without it, the entry that says false runs unconfined."""
    monkeypatch.chdir(workdir(tmp_path / "p", {"plain": entry(), "free": entry(sandbox=False)}))
    confined = server_lines(Project.read(".", sandbox=True))
    assert "; sandboxed: reads " in confined["plain"] and "; network: none" in confined["plain"]
    assert "refused: its entry says \"sandbox\": false; --sandbox confines it all the same" in confined["free"]
    loose = server_lines(Project.read("."))
    assert "sandboxed" not in loose["plain"] and loose["free"].endswith("; not sandboxed")
    assert Project.read(".", sandbox=True).servers()["free"].sandbox is True


def test_a_wider_grant_asks_again(tmp_path, monkeypatch):
    """Trust is bound to the grant set: "sandbox": true trusted, then {"read": ["~/notes"]} asks again;
    the folder's link to / is named as refused in the question itself."""
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    cwd = workdir(tmp_path / "p", {"s": entry(sandbox=True)})
    monkeypatch.chdir(cwd)
    asked = ask = Asked()
    assert decide(Project.read("."), False, ask) and len(asked) == 1
    assert decide(Project.read("."), False, ask) and len(asked) == 1
    (cwd / "data").symlink_to("/")
    wider = {"s": entry(sandbox={"read": ["~/notes"]}, args=[PROBE, "data"])}
    (cwd / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": wider}))
    line = server_lines(Project.read("."))["s"]
    assert "reads " in line and "~/notes" in line and "refused: data (named by its args): a link out of the " \
                                                        "project, to /" in line, line
    assert decide(Project.read("."), False, ask) and len(asked) == 2


def test_the_a_answers_are_bound_to_the_grant_set(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    project = Project.read(str(workdir(tmp_path / "p", {"s": entry(sandbox=True), "t": entry(
        sandbox={"read": ["~/notes"]}), "u": entry()})))
    parsed = project.servers()
    parts = [runs_of(parsed[name]) for name in ("s", "t", "u")]
    assert parts[0]["sandbox"] != parts[1]["sandbox"] and "sandbox" not in parts[2]
    assert {k: v for k, v in parts[0].items() if k != "sandbox"} == parts[2]


def test_a_failed_start_names_what_the_sandbox_refused(tmp_path, monkeypatch):
    """From a sandboxed server's last stderr lines: the refused path (as Python, uv, Node and git say it)
    and the grant that allows it, or the network; a new file's folder, which a grant can name; no hint where
    none would help (the home itself, what the agent may not reach either) or should be given (a secret, the
    system's files); none for an unsandboxed server."""
    from beyond.client.config import parse_server_config
    from beyond.wire.sandbox import refused_in
    home = tmp_path / "home"
    for path in ("srv/data/a.csv", "srv/app/config.json", "home/.gitconfig", "srv/keys/a.pem"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    (tmp_path / "srv" / "uv").mkdir()
    monkeypatch.setenv("HOME", str(home))
    boxed = parse_server_config("s", {"command": "python3", "sandbox": True})
    said = {f"PermissionError: [Errno 13] Permission denied: '{tmp_path}/srv/data/a.csv'":
            f'{{"read": ["{tmp_path}/srv/data/a.csv"]}}',
            f"error: failed to create directory `{tmp_path}/srv/uv/tools`: Permission denied (os error 13)":
                f'{{"write": ["{tmp_path}/srv/uv"]}}',
            f"Error: EACCES: permission denied, open '{tmp_path}/srv/app/config.json'":
                f'{{"read": ["{tmp_path}/srv/app/config.json"]}}',
            f"fatal: unable to access '{home}/.gitconfig': Permission denied": '{"read": ["~/.gitconfig"]}'}
    for line, grant in said.items():
        assert f'"sandbox": {grant} grants it' in refused_in(boxed, ["starting", line]), line
    useless = [f"fatal: Unable to create '{home}/.gitconfig.lock': Permission denied",  # only the home would help
               f"PermissionError: [Errno 13] Permission denied: '{tmp_path}/srv/keys/a.pem'",  # a secret
               "Error: EACCES: permission denied, open '/etc/hostname'"]  # the system's
    if os.geteuid() != 0:
        useless.append("PermissionError: [Errno 13] Permission denied: '/root/.profile'")
    for line in useless:
        assert refused_in(boxed, [line]) == " (it ran sandboxed: /mcp shows what it may reach)", line
    offline = "cause: failed to lookup address information: Temporary failure in name resolution"
    assert '"sandbox": {"network": true}' in refused_in(boxed, [offline])
    assert '"network": true' in refused_in(parse_server_config("n", {"command": "npx", "sandbox": True}), [])
    assert refused_in(parse_server_config("n", {"command": "npx", "sandbox": {"network": True}}), []) == \
        " (it ran sandboxed: /mcp shows what it may reach)"
    assert refused_in(parse_server_config("s", {"command": "python3"}), [offline]) == ""


def test_the_question_reads_no_fifo_device_or_endless_file_a_folder_names(tmp_path, monkeypatch):
    """What the grants read of the folder (a pyvenv.cfg above a script, a program's #! line) is read as
    the folder's file rules say: a FIFO, a link to /dev/zero or bytes that are not UTF-8 neither hang the
    question nor break it."""
    import contextlib
    import os
    import threading
    cwd = workdir(tmp_path / "p", {"fifo": entry(args=[PROBE, "a/bin/x.py"]), "zero": entry(args=[PROBE, "b/bin/x.py"]),
                                   "bytes": entry(args=[PROBE, "c/bin/x.py"]), "pipe": entry(command="./run")})
    for name in "abc":
        (cwd / name / "bin").mkdir(parents=True)
        (cwd / name / "bin" / "x.py").write_text("print()\n")
    os.mkfifo(cwd / "a" / "pyvenv.cfg")
    (cwd / "b" / "pyvenv.cfg").symlink_to("/dev/zero")
    (cwd / "c" / "pyvenv.cfg").write_bytes(b"home = \xff\xfe\n")
    os.mkfifo(cwd / "run", 0o755)
    monkeypatch.chdir(cwd)
    lines: list[dict] = []
    asking = threading.Thread(target=lambda: lines.append(server_lines(Project.read(".", sandbox=True))), daemon=True)
    asking.start()
    asking.join(20)
    for fifo in (cwd / "a" / "pyvenv.cfg", cwd / "run"):  # a reader stuck on one is let go
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert lines, "the trust question hung on a file of the folder"
    assert set(lines[0]) == {"fifo", "zero", "bytes", "pipe"} and all("sandboxed" in line for line in lines[0].values())
