"""The audit log (beyond/folder/audit.py): one JSON line per tool call, masked and bounded; a failure to
write is one warning."""
import json

import tools
from beyond.servers.calls import Calls
from conftest import agent_env, fake, run_agent, workdir


def test_every_tool_call_is_audited(tmp_path, monkeypatch):
    """Built-in and MCP calls each append one JSON line; /audit shows them; secrets are masked."""
    monkeypatch.setenv("MY_TOKEN", "tok-audit-secret")
    cwd = workdir(tmp_path, {"fake": fake("normal")}, {"mcp_fake_echo": "allow", "mcp_fake_refuse": "deny"})
    done = run_agent(cwd, ['/call mcp_fake_echo {"text": "tok-audit-secret"}', "/call mcp_fake_hang", "n",
                           "/call mcp_fake_refuse", "/call ls", "/audit", "/exit"], agent_env(key=None))
    entries = [json.loads(line) for line in (cwd / ".geekagent" / "audit.jsonl").read_text().splitlines()]
    assert [(e["server"], e["tool"], e["decision"], e["outcome"]) for e in entries] == [
        ("fake", "mcp_fake_echo", "allow", "ok"), ("fake", "mcp_fake_hang", "asked-no", "cancelled"),
        ("fake", "mcp_fake_refuse", "deny", "cancelled"), ("", "ls", "allow", "ok")]
    assert "tok-audit-secret" not in json.dumps(entries) and entries[0]["result_chars"] == len("[REDACTED:MY_TOKEN]")
    assert all(isinstance(e["duration_ms"], int) and e["time"] for e in entries)
    assert done.stdout.count("mcp_fake_") >= 4 and "allow -> ok" in done.stdout


def test_audit_write_failure_is_one_warning(tmp_path, capfd):
    """An audit log that cannot be written is one warning; the calls still work."""
    import beyond.folder.audit as beyond_audit
    audit = beyond_audit.AuditLog(lambda name: "", str(tmp_path / "no-such-dir" / "x" / "audit.jsonl"))
    (tmp_path / "no-such-dir").write_text("a file, so no folder can be made here")
    calls = Calls()
    calls.reports.append(lambda *report: audit.record(*report[:6]))  # as agent.py hands it on
    tools.register_builtin_tools(str(tmp_path))
    assert calls.run("get_current_time", "{}") and calls.run("get_current_time", "{}")
    assert capfd.readouterr().err.count("cannot write the audit log") == 1


def test_audit_lines_split_on_newlines_only_and_names_are_bounded(tmp_path):
    """U+2028 and U+0085 in an argument do not split an entry (hiding the ones before it); a 200,000-character
    tool name is recorded bounded."""
    import beyond.folder.audit as beyond_audit
    audit = beyond_audit.AuditLog(lambda name: "", str(tmp_path / "audit.jsonl"))
    audit.record("first", "{}", "allow", "ok", 0.0, 1)
    audit.record("second", json.dumps({"text": "a\u2028b\x85c"}, ensure_ascii=False), "allow", "ok", 0.0, 1)
    audit.record("n" * 200_000, "{}", None, "error", 0.0, 0)
    shown = audit.last(20)
    assert len(shown) == 3 and "first" in shown[0] and "second" in shown[1]
    assert max(len(line) for line in (tmp_path / "audit.jsonl").read_text().split("\n")) < 3000
