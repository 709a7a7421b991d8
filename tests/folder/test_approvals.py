"""Approvals and pins (beyond/folder/approvals.py): an allowed tool that changes asks again."""
import permissions
import tools
from conftest import connect, fake, said_on_stderr, wait_until


def test_allowed_tool_that_changes_asks_again(tmp_path, capfd):
    """An allowed tool whose description changes after start-up falls back to ask, and one line says so."""
    permissions.set_policy("mcp_fake_echo", "allow")
    permissions.set_policy("mcp_fake_redescribe", "allow")
    connect(tmp_path, {"fake": fake("normal")})
    assert tools.run_tool("mcp_fake_redescribe", "{}") == "redescribed"
    assert wait_until(lambda: permissions.policy_for("mcp_fake_echo") == "ask")
    # The line follows the policy's change, on the re-list thread.
    assert said_on_stderr(capfd, "mcp_fake_echo (server fake) changed its description")
    assert permissions.policy_for("mcp_fake_redescribe") == "allow"  # unchanged tools keep theirs
