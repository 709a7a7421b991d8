"""make test: the suite in a few pytest processes at once, then one closing line for all of them.

The tests mostly wait (on subprocesses, sockets and terminals), so a few processes side by side
finish in a fraction of the time one takes. Tests are dealt out one by one in collection order into
one share per process, so each share gets its part of every file's slow tests (and each process
imports the suite once: a pytest start costs about a second of CPU). Each process has its own
temporary folder and no cache; its output is printed whole when it ends. Exit status: 0 only when
every share passed. `python tests/parallel.py [pytest args...]`; TEST_PROCESSES sets how many run
at once (default 6).
"""
import compileall
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Six keep a 2-core machine busy while most tests wait (about 24 s here, 4: about 28 s), with room
# for their servers.
PROCESSES = int(os.environ.get("TEST_PROCESSES", "6"))
# Shares per process: more would balance the run, but each costs a pytest start (a second of CPU).
SHARES_PER_PROCESS = 1
# The whole run is bounded: a process still running after this is killed and counts as failed.
RUN_LIMIT_S = 600
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
    # Compiled once here, so the six processes do not all compile the same files.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for folder in ("day15", "tests"):
        compileall.compile_dir(ROOT / folder, quiet=1)
    options = [a for a in args if a.startswith("-")]
    ids = collect(args or ["tests"])
    count = PROCESSES * SHARES_PER_PROCESS
    waiting = [ids[i::count] for i in range(count) if ids[i::count]]
    totals: dict[str, int] = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="geekagent-tests-") as base:
        running: list[subprocess.Popen] = []
        while waiting or running:
            while waiting and len(running) < PROCESSES:
                share, name = waiting.pop(0), f"{base}/s{len(waiting)}"
                with open(f"{name}.out", "w") as out:  # a file, not a pipe: a long report never blocks it
                    running.append(subprocess.Popen(
                        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={name}",
                         *options, *share], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT))
                running[-1].output = f"{name}.out"
            done = _first_done(running, began)
            running.remove(done)
            with open(done.output, encoding="utf-8", errors="replace") as out:
                output = out.read()
            print(output, end="" if output.endswith("\n") else "\n")
            last = output.strip().splitlines()[-1] if output.strip() else ""
            for number, word in COUNTS.findall(last):
                key = "errors" if word.startswith("error") else word
                totals[key] = totals.get(key, 0) + int(number)
            failed |= done.returncode != 0
    summary = ", ".join(f"{totals.get(k, 0)} {k}" for k in ("passed", "failed"))
    extra = "".join(f", {n} {k}" for k, n in totals.items() if k not in ("passed", "failed") and n)
    print(f"{len(ids)} tests in {count} shares, {PROCESSES} at a time, {time.monotonic() - began:.1f} s")
    print(f"{summary}{extra}")  # the plain closing line, alone
    return 1 if failed or not totals.get("passed") else 0


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
