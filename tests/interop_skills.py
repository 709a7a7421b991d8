"""make interop: skills (the MCP extension SEP-2640) from a real server, FastMCP 4.1.4's skills provider
(tests/fakes/fastmcp_skills_server.py), over stdio and Streamable HTTP, through the REPL with the scripted
model: listed, loaded after the question, a file read, and asked again once a file changed after an `a`."""
import contextlib

import pytest

from conftest import ROOT, agent_env, run_agent, workdir
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls
from interop_servers import FASTMCP, SLOW_START, installed, listening  # noqa: F401  (installed: the fixture)

SERVER = ROOT / "tests" / "fakes" / "fastmcp_skills_server.py"


def skills_root(tmp_path):
    root = tmp_path / "skills"
    (root / "pdf-tools" / "references").mkdir(parents=True)
    (root / "pdf-tools" / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\nlicense: Apache-2.0\n"
        "allowed-tools: Read Grep\nmetadata:\n  version: \"1.0\"\n  author: example-org\n---\n"
        "# PDF tools\n\nRead references/GUIDE.md first.\n")
    (root / "pdf-tools" / "references" / "GUIDE.md").write_text("The guide: tables come first.\n")
    return root


@contextlib.contextmanager
def over_http(root):
    """FastMCP's skills server on a free local port; stopped afterwards."""
    with listening([str(FASTMCP), str(SERVER), str(root), "--http"]) as url:
        yield {"type": "http", "url": url}


@contextlib.contextmanager
def over_stdio(root):
    yield {"command": str(FASTMCP), "args": [str(SERVER), str(root)]}


LOAD_AND_READ = [tool_calls(("load_skill", {"skill": "fm:pdf-tools"})),
                 tool_calls(("read_skill_file", {"skill": "fm:pdf-tools", "path": "references/GUIDE.md"})),
                 answer_from_tools]


@pytest.mark.parametrize("transport", [over_stdio, over_http])
def test_fastmcp_skills_are_listed_loaded_read_and_asked_again_once_changed(tmp_path, transport):
    root = skills_root(tmp_path)
    with transport(root) as reached:
        cwd = workdir(tmp_path / "p", {"fm": {**reached, "protocol": "2026-07-28", **SLOW_START}})
        with FakeOpenAI(list(LOAD_AND_READ)) as model:
            done = run_agent(cwd, ["/skills", "use the pdf skill", "a", "/exit"], agent_env(model.base_url),
                             timeout=90)
        assert "fm:pdf-tools  (MCP server fm; 2 files," in done.stdout and "asks before loading" in done.stdout
        assert "Load skill fm:pdf-tools from MCP server fm: 'Extract text and tables from PDF files.'" in done.stdout
        assert "allowed-tools: Read Grep (not granted by loading)" in done.stdout
        assert "[skill fm:pdf-tools from MCP server fm; untrusted]" in done.stdout
        assert "The guide: tables come first." in done.stdout
        (root / "pdf-tools" / "references" / "GUIDE.md").write_text("The guide, rewritten.\n")
        with FakeOpenAI(list(LOAD_AND_READ)) as model:
            again = run_agent(cwd, ["use the pdf skill", "n", "/exit"], agent_env(model.base_url), timeout=90)
        assert "It changed since you allowed it" in again.stdout
        assert "Not loaded: the user declined skill fm:pdf-tools" in again.stdout


def test_a_legacy_session_with_fastmcp_says_where_its_skills_are(tmp_path):
    """FastMCP serves skills at 2026-07-28 only: on the handshake /mcp says what to set in the entry."""
    root = skills_root(tmp_path)
    cwd = workdir(tmp_path / "p", {"fm": {"command": str(FASTMCP), "args": [str(SERVER), str(root)], **SLOW_START}})
    with FakeOpenAI([]) as model:
        done = run_agent(cwd, ["/mcp fm", "/exit"], agent_env(model.base_url), timeout=90)
    assert 'skills: its resources look like skills, which MCP serves from 2026-07-28 on: set "protocol"' in done.stdout
