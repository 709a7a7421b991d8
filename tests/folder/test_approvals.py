"""Approvals and pins (beyond/folder/approvals.py): an allowed tool that changes asks again."""
from beyond.servers.connect import Servers
from conftest import connect, fake, run_call, said_on_stderr, set_tool_policy, wait_until


def test_allowed_tool_that_changes_asks_again(tmp_path, capfd):
    """An allowed tool whose description changes after start-up falls back to ask, and one line says so."""
    set_tool_policy("mcp_fake_echo", "allow")
    set_tool_policy("mcp_fake_redescribe", "allow")
    servers = Servers()
    connect(tmp_path, {"fake": fake("normal")}, servers)
    try:
        assert run_call("mcp_fake_redescribe", "{}") == "redescribed"
        assert wait_until(lambda: servers.approvals.policy_for("mcp_fake_echo") == "ask")
    finally:
        servers.stop_mcp_servers()
    # The line follows the policy's change, on the re-list thread.
    assert said_on_stderr(capfd, "mcp_fake_echo (server fake) changed its description")
    assert servers.approvals.policy_for("mcp_fake_redescribe") == "allow"  # unchanged tools keep theirs


def test_an_always_that_cannot_be_kept_says_so_and_lasts_the_session(tmp_path, capfd):
    """approvals.json readable by others (mode 0644) is not written: `a` says what to fix and that it lasts for this
    session, never "kept in"; the tool runs unasked for the rest of the run all the same."""
    import os
    from beyond.folder.approvals import Approvals, ensure
    state = tmp_path / "state"
    state.mkdir()
    (state / "approvals.json").write_text("{}")
    os.chmod(state / "approvals.json", 0o644)
    ensure("t", "ask")
    approvals = Approvals(str(tmp_path), path=str(state / "approvals.json"), confirm=lambda prompt, always: "always")
    assert approvals.decide("t", "Run t?") == "asked-yes"
    said = capfd.readouterr()
    assert "must be a file of yours that only you can read (chmod 600); it lasts for this session only" in said.err
    assert "t is now allowed without asking (for the rest of this session)." in said.out and "kept in" not in said.out
    assert approvals.policy_for("t") == "allow"


def test_a_state_file_that_cannot_be_read_is_said_once_at_start(tmp_path):
    """A corrupt approvals.json (0600) is said once when the agent starts, not used, and left as it is."""
    import os
    from conftest import agent_env, run_agent, workdir
    cwd = workdir(tmp_path / "p", {})
    state = tmp_path / "state" / "geekagent"
    state.mkdir(parents=True)
    (state / "approvals.json").write_text("{not json")
    os.chmod(state / "approvals.json", 0o600)
    done = run_agent(cwd, ["/exit"], {**agent_env(), "XDG_STATE_HOME": str(tmp_path / "state")})
    assert done.stderr.count("approvals.json could not be read as the agent writes it") == 1
    assert (state / "approvals.json").read_text() == "{not json"
