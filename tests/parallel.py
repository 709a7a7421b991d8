"""make test: the suite in a few pytest processes at once, then one closing line for all of them.

The tests mostly wait (on subprocesses, sockets and terminals), so a few processes side by side
finish in a fraction of the time one takes. Tests are dealt out one by one in collection order, so
each file's slow tests land in different processes. Each process has its own temporary folder and no
cache; its output is printed whole when it ends. Exit status: 0 only when every process passed.
`python tests/parallel.py [pytest args...]`; TEST_PROCESSES sets how many (default 3).
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Three keep a 2-core machine busy while most tests wait, and leave room for the servers they start.
PROCESSES = int(os.environ.get("TEST_PROCESSES", "3"))
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
    options = [a for a in args if a.startswith("-")]
    ids = collect(args or ["tests"])
    shares = [ids[i::PROCESSES] for i in range(PROCESSES) if ids[i::PROCESSES]]
    with tempfile.TemporaryDirectory(prefix="geekagent-tests-") as base:
        runs = [subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                  f"--basetemp={base}/p{i}", *options, *share], cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                for i, share in enumerate(shares)]
        totals: dict[str, int] = {}
        failed = False
        for run in runs:
            try:
                output, _ = run.communicate(timeout=max(1.0, RUN_LIMIT_S - (time.monotonic() - began)))
            except subprocess.TimeoutExpired:
                run.kill()
                output, _ = run.communicate()
                output += f"\nkilled after {RUN_LIMIT_S} s\n"
            print(output, end="" if output.endswith("\n") else "\n")
            last = output.strip().splitlines()[-1] if output.strip() else ""
            for count, word in COUNTS.findall(last):
                key = "errors" if word.startswith("error") else word
                totals[key] = totals.get(key, 0) + int(count)
            failed |= run.returncode != 0
    summary = ", ".join(f"{totals.get(k, 0)} {k}" for k in ("passed", "failed"))
    extra = "".join(f", {n} {k}" for k, n in totals.items() if k not in ("passed", "failed") and n)
    print(f"{len(ids)} tests in {len(runs)} processes, {time.monotonic() - began:.1f} s")
    print(f"{summary}{extra}")  # the plain closing line, alone
    return 1 if failed or not totals.get("passed") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
