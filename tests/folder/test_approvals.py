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
