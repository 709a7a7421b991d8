"""make test: the suite in a few pytest processes at once, then one closing line for all of them.

The tests mostly wait (on subprocesses, sockets and terminals), so a few processes side by side
finish in a fraction of the time one takes. Every process collects the same tests and takes the
next one not yet taken whenever it is free (this module is also their pytest plugin: a counter in
a locked file says which test is next), so slow tests spread over the processes whatever their
order, and each process imports the suite once (a pytest start costs about a second of CPU). The
files take turns in that order, so one file's waiting tests do not leave the CPUs idle together. Each
process has its own temporary folder and no cache; its output is printed whole when it ends.
Each process runs in a session of its own: once all have ended, a process still in one of those
sessions was left behind by a test, and a change under .geekagent/ (git status, ignored files too)
was made in the checkout by one; either fails the run, naming what. Exit status: 0 only when every
process passed and nothing was left. `python tests/parallel.py [pytest args...]`; TEST_PROCESSES
sets how many run at once (default 6).
"""
import compileall
import fcntl
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Six keep a 2-core machine busy while most tests wait, with room for their servers (eight were no
# faster here, the run being mostly CPU-bound by then).
PROCESSES = int(os.environ.get("TEST_PROCESSES", "6"))
# Set in the processes this starts: the file whose counter names the next test to take, and how
# many tests the runner collected (a process that collected others stops at once).
QUEUE, EXPECTED = "GEEKAGENT_TEST_QUEUE", "GEEKAGENT_TEST_COUNT"
# The whole run is bounded: a process still running after this is killed and counts as failed.
RUN_LIMIT_S = 600
# After the run, what the tests started is given this long to end (an agent's server stopping).
LEFT_BEHIND_WAIT_S = 5.0
COUNTS = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


def collect(args: list[str]) -> list[str]:
    """The test ids pytest would run for these arguments, in its order."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    if done.returncode not in (0, 5) or not ids:
        sys.exit(done.stdout + done.stderr or "pytest collected no tests")
    return ids


def main(args: list[str]) -> int:
    began = time.monotonic()
    # The suite starts Python hundreds of times (the agent, fake servers): with bytecode cached, as
    # a user runs it, each start skips compiling the project (sandboxes often switch caching off).
    # Compiled once here, so the processes do not all compile the same files.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for folder in ("day15", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    args = args or ["tests"]
    ids = collect(args)
    totals: dict[str, int] = {}
    failed, before = False, _checkout_state()
    with tempfile.TemporaryDirectory(prefix="geekagent-tests-") as base:
        Path(base, "next").write_text("0")
        env = {**os.environ, QUEUE: f"{base}/next", EXPECTED: str(len(ids)),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "tests"), os.environ.get("PYTHONPATH")]))}
        running: list[subprocess.Popen] = []
        for number in range(min(PROCESSES, len(ids))):
            name = f"{base}/p{number}"
            with open(f"{name}.out", "w") as out:  # a file, not a pipe: a long report never blocks it
                running.append(subprocess.Popen(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "parallel",
                     f"--basetemp={name}", *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True))
            running[-1].output = f"{name}.out"
        sessions = {run.pid for run in running}
        try:
            failed |= _report(running, began, totals)
        finally:  # Ctrl-C reaches the runner only (each process has a session of its own): they are ended
            for run in running:
                run.kill()
    failed |= _left_behind(sessions) | _checkout_changed(before)
    summary = ", ".join(f"{totals.get(k, 0)} {k}" for k in ("passed", "failed"))
    extra = "".join(f", {n} {k}" for k, n in totals.items() if k not in ("passed", "failed") and n)
    print(f"{len(ids)} tests, {min(PROCESSES, len(ids))} processes, {time.monotonic() - began:.1f} s")
    print(f"{summary}{extra}")  # the plain closing line, alone
    ran = sum(totals.get(k, 0) for k in ("passed", "failed", "skipped", "xfailed", "xpassed"))
    return 1 if failed or not totals.get("passed") or ran != len(ids) else 0


def _report(running: list[subprocess.Popen], began: float, totals: dict[str, int]) -> bool:
    """Print each process's output as it ends, adding its counts to `totals`; True if one failed."""
    failed = False
    while running:
        done = _first_done(running, began)
        running.remove(done)
        with open(done.output, encoding="utf-8", errors="replace") as out:
            output = out.read()
        print(output, end="" if output.endswith("\n") else "\n")
        last = output.strip().splitlines()[-1] if output.strip() else ""
        for number, word in COUNTS.findall(last):
            key = "errors" if word.startswith("error") else word
            totals[key] = totals.get(key, 0) + int(number)
        failed |= done.returncode not in (0, 5)  # 5: this process found no test left to take
    return failed


def _left_behind(sessions: set[int]) -> bool:
    """Whether a process of the tests' sessions outlived them (each is then named and killed)."""
    deadline = time.monotonic() + LEFT_BEHIND_WAIT_S
    while (left := _in_sessions(sessions)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid, command in left:
        print(f"left behind by a test: process {pid}: {command}")
        try:
            os.kill(pid, 9)
        except OSError:
            pass  # it ended meanwhile
    return bool(left)


def _in_sessions(sessions: set[int]) -> list[tuple[int, str]]:
    """(pid, command line) of each live process (zombies aside) in one of `sessions`, from /proc."""
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        try:
            with open(f"{entry.path}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # state ppid pgrp session ...
            if int(fields[3]) in sessions and fields[0] != b"Z":
                with open(f"{entry.path}/cmdline", "rb") as f:
                    found.append((int(entry.name), f.read().replace(b"\0", b" ").decode(errors="replace")[:200]))
        except (OSError, ValueError, IndexError):
            continue  # not a process, or it ended while we looked
    return found


def _checkout_state() -> str | None:
    """What git says of .geekagent/ in the checkout, ignored files included (None without git)."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--ignored", ".geekagent"], cwd=ROOT,
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _checkout_changed(before: str | None) -> bool:
    after = _checkout_state()
    if before is None or after is None or after == before:
        return False
    print(f"a test changed the checkout's .geekagent/: git status was\n{before or '(clean)'}\nand is\n{after}")
    return True


def _take(path: str) -> int:
    """The index of the next test no process has taken, counted in a file under a lock."""
    with open(path, "r+") as counter:
        fcntl.flock(counter, fcntl.LOCK_EX)
        index = int(counter.read() or 0)
        counter.seek(0)
        counter.write(str(index + 1))
        counter.truncate()
        return index


def pytest_collection_modifyitems(session, config, items):
    """In a process this module started: the files' tests taken in turn (each file's first, then each
    one's second, ...), so the tests of one file that wait on purpose (a server slow to start) do not
    all run at once while the CPUs stand idle. Every process orders them alike."""
    if not os.environ.get(QUEUE):
        return
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::")[0], []).append(item)
    items[:] = [item for turn in itertools.zip_longest(*files.values()) for item in turn if item is not None]


def pytest_runtestloop(session):
    """In a process this module started: run the tests it takes, one at a time, until none is left.
    The test after the current one is taken before it runs, so pytest tears down only the fixtures
    the next test does not share."""
    path = os.environ.get(QUEUE)
    if not path or session.config.option.collectonly:
        return None  # pytest's own loop
    items = session.items
    if str(len(items)) != os.environ.get(EXPECTED):
        raise session.Failed(f"this process collected {len(items)} tests, the runner {os.environ.get(EXPECTED)}")
    index = _take(path)
    while index < len(items):
        following = _take(path)
        nextitem = items[following] if following < len(items) else None
        items[index].config.hook.pytest_runtest_protocol(item=items[index], nextitem=nextitem)
        if session.shouldfail or session.shouldstop:
            raise session.Interrupted(str(session.shouldfail or session.shouldstop))
        index = following
    return True


def _first_done(running: list[subprocess.Popen], began: float) -> subprocess.Popen:
    """The first process to end (polled, every 50 ms); past RUN_LIMIT_S every one still running is
    killed and ends as failed."""
    while True:
        for run in running:
            if run.poll() is not None:
                return run
        if time.monotonic() - began > RUN_LIMIT_S:
            for run in running:
                run.kill()
            running[0].wait()
            return running[0]
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
