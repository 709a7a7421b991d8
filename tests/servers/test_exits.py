"""The agent leaves cleanly however it is ended (beyond/servers/exits.py): no server, nor a descendant that
left its group, outlives it."""
import os
import random
import signal
import sys
import threading
import time

from conftest import AGENT, agent_env, fake, processes_in, run_agent, wait_until, workdir


def test_signal_at_any_moment_of_start_up_leaves_no_server(tmp_path):
    """SIGTERM at random moments of start-up, just after spawn included: servers that ignore SIGTERM
    and the end of their input are killed all the same."""
    import subprocess
    seed = random.randrange(1 << 32)  # printed on failure: TEST_SEED=<seed> replays the same moments
    seed = int(os.environ.get("TEST_SEED", seed))
    rng = random.Random(seed)
    delays = [None] + [rng.uniform(0.0, 0.4) for _ in range(7)]  # None: as soon as a server runs
    failures = []

    def one(i: int, delay: float | None) -> None:
        cwd = workdir(tmp_path / str(i), {f"s{j}": fake("ignore_term", "0.2", timeout=30) for j in range(2)})
        agent = subprocess.Popen([sys.executable, AGENT], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=agent_env(key=None))
        if delay is None:
            wait_until(lambda: set(processes_in(cwd)) - {agent.pid}, 20)
        else:
            time.sleep(delay)  # the moment of the signal is what this test varies; nothing to wait for
        agent.send_signal(signal.SIGTERM)
        try:
            agent.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.communicate()
            failures.append(f"delay {delay}: the agent did not exit")
        if not wait_until(lambda: not processes_in(cwd), 5):
            failures.append(f"delay {delay}: left {processes_in(cwd)}")

    threads = [threading.Thread(target=one, args=(i, d)) for i, d in enumerate(delays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert failures == [], f"TEST_SEED={seed}"


def test_agent_leaves_promptly_whatever_the_server_does(tmp_path, start_agent):
    """SIGTERM while a call is stuck writing to a server that neither reads nor minds SIGTERM: gone, nothing left."""
    cwd = workdir(tmp_path, {"x": fake("ignore_term", timeout=60)},
                  {"mcp_x_stop_reading": "allow", "mcp_x_echo": "allow"})
    agent = start_agent(cwd, agent_env(key=None))
    agent.stdin.write("/call mcp_x_stop_reading\n")
    agent.stdin.write('/call mcp_x_echo {"text": "' + "x" * 1_000_000 + '"}\n')
    agent.stdin.flush()
    assert wait_until(lambda: len(processes_in(cwd)) == 2, 20)  # the agent and its server
    agent.send_signal(signal.SIGTERM)
    agent.communicate(timeout=10)  # the write's own deadline is 60 s
    assert agent.returncode == 128 + signal.SIGTERM
    assert wait_until(lambda: not processes_in(cwd), 5)


def test_a_descendant_that_left_the_servers_group_is_stopped_at_exit(tmp_path):
    """A server's child in a session of its own (as daemons do) is re-parented to the agent, not to init,
    and stopped when the agent leaves."""
    from conftest import pid_alive
    pid_file = tmp_path / "escaped.pid"
    cwd = workdir(tmp_path / "agent", {"d": fake("escaped_child", str(pid_file))})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None))  # it also checks nothing runs in cwd
    assert "d (" in done.stdout and not pid_alive(int(pid_file.read_text()))


def test_what_a_server_that_failed_to_start_said_is_kept_for_logs(tmp_path):
    """A server that writes its error, then a hint, and exits: start-up says /logs has more; /logs and
    /logs <server> show all it said; /logs of no such server says so."""
    said = ("import sys; print('Traceback (most recent call last):', file=sys.stderr); "
            "print('ValueError: the config has no region', file=sys.stderr); "
            "print('hint: see the docs', file=sys.stderr); sys.exit(1)")
    cwd = workdir(tmp_path, {"bad": {"command": sys.executable, "args": ["-c", said]}})
    done = run_agent(cwd, ["/logs", "/logs bad", "/logs nosuch", "/exit"], agent_env(key=None))
    assert "x bad: " in done.stdout and "(/logs bad has what it said)" in done.stdout
    assert done.stdout.count("bad: (failed to start)") == 2
    assert done.stdout.count("  ValueError: the config has no region") == 2
    assert "no server named nosuch; /mcp lists them" in done.stdout
