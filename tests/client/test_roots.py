"""The roots a server is given (beyond/client/roots.py): what its entry says, else the folders its args
name (server-filesystem replaces its folders with the client's roots), else the project folder."""
import os

import pytest

from beyond.asks.handlers import Handlers
from beyond.client.capabilities import AskRefused, offered_to
from beyond.client.config import parse_server_config
from beyond.console import Console
from beyond.folder.question import what_runs


def entry(**keys):
    return parse_server_config("mcp.json: mcpServers.files", {"command": "npx", **keys})


def roots(config, project) -> list[str]:
    answer = Handlers(Console(), root=str(project)).answer("files", config, "roots/list", None)
    return [r["uri"] for r in answer["roots"]]


def test_the_folders_an_entrys_args_name_are_its_roots_instead_of_the_project(tmp_path):
    """The README's filesystem server on /tmp gets /tmp, not the project folder (which would narrow it)."""
    data = tmp_path / "data"
    data.mkdir()
    config = entry(args=["-y", "@modelcontextprotocol/server-filesystem", str(data), "/no/such/folder"])
    assert roots(config, tmp_path / "project") == [f"file://{data}"]
    assert roots(entry(args=["-y", "@modelcontextprotocol/server-everything"]), tmp_path) == [f"file://{tmp_path}"]


def test_roots_written_in_the_entry_win_relative_ones_from_the_project(tmp_path):
    (tmp_path / "src").mkdir()
    config = entry(args=["/tmp"], roots=["src", str(tmp_path), "missing"])
    assert roots(config, tmp_path) == [f"file://{tmp_path / 'src'}", f"file://{tmp_path}"]


def test_roots_false_declares_no_roots_and_answers_none(tmp_path):
    config = entry(roots=False)
    handlers = Handlers(Console(), root=str(tmp_path))
    assert "roots" not in offered_to(handlers, config) and "roots" in offered_to(handlers, entry())
    with pytest.raises(AskRefused, match="roots"):
        handlers.answer("files", config, "roots/list", None)


def test_a_remote_server_gets_roots_only_from_its_entry(tmp_path):
    remote = parse_server_config("mcp.json: mcpServers.r", {"url": "https://mcp.example.com/mcp"})
    assert roots(remote, tmp_path) == []


def test_a_folders_own_entry_cannot_hand_out_the_disk_or_home_and_the_question_shows_what_is_outside(tmp_path):
    """From the folder's mcp.json, / and ~ are no roots (the project folder is, as without them); a
    folder outside the project is named in the trust question."""
    config = entry(args=["/", os.path.expanduser("~")])
    config.folder_entry = True
    assert roots(config, tmp_path) == [f"file://{tmp_path}"]
    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    wide = entry(args=[str(tmp_path / "elsewhere")])
    wide.folder_entry = True
    assert f"given folders outside this one: {tmp_path / 'elsewhere'}" in what_runs(wide, str(tmp_path / "project"))
    assert "outside" not in what_runs(entry(), str(tmp_path / "project"))


def test_roots_must_be_a_list_of_folders_or_false():
    with pytest.raises(Exception, match='"roots" must be a list of folders, or false'):
        entry(roots=True)


def test_a_root_that_leads_elsewhere_after_the_question_is_left_out_with_a_line(tmp_path, capfd):
    """A folder's entry with "roots": ["docs"]: once docs becomes a link to a folder outside the project
    (mid-session), roots/list leaves it out and says so; the question never showed that folder."""
    import json
    import shutil
    from beyond.folder.trust import Project
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".geekagent").mkdir(parents=True)
    (project / "docs").mkdir()
    outside.mkdir()
    (project / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"files": {
        "command": "npx", "roots": ["docs"]}}}))
    config = Project.read(str(project)).servers()["files"]
    assert roots(config, project) == [f"file://{project / 'docs'}"]
    shutil.rmtree(project / "docs")
    os.symlink(outside, project / "docs")
    assert roots(config, project) == []
    assert f"{outside} is left out of its roots: it is not where the trust question showed it" in capfd.readouterr().err
