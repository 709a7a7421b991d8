"""A shared file never receives a secret: `mcp add` and `mcp import` refuse, for the project's mcp.json, a
secret written out anywhere in an entry, naming where and how to write it instead; into the user's own
file they write it, and what `mcp list --json` and `mcp get` print of it is masked."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AGENT, agent_env

URL = "https://mcp.example.com/mcp"
# The entries, as `mcp add` takes them: where the secret stands, and the fix the refusal gives.
ADDED = {
    "env": (["--env", "GH_TOKEN=ghp_literal0001", "--", "npx", "gh"], "env GH_TOKEN", "--env 'GH_TOKEN=${GH_TOKEN}'"),
    "header": (["--url", URL, "--header", "Authorization=Bearer literal0002"], "header Authorization",
               "--header 'Authorization=Bearer ${TOKEN}'"),
    "flag": (["--", "npx", "srv", "--api-key", "literal0003"], "args[2] (after --api-key)", "'${API_KEY}'"),
    "password": (["--url", "https://app:literal0004@mcp.example.com/mcp"], "url (the URL's password)",
                 "--url 'https://app:${PASSWORD}@mcp.example.com/mcp'"),
    "query": (["--url", f"{URL}?api_key=literal0005"], "url (after api_key)", f"--url '{URL}?api_key=${{API_KEY}}'"),
    "docker": (["--", "docker", "run", "-e", "GH_TOKEN=literal0006", "img"], "args[2] (after GH_TOKEN)",
               "'GH_TOKEN=${GH_TOKEN}' in its place"),
    "remote": (["--", "npx", "mcp-remote", URL, "--header", "Authorization: Bearer literal0007"],
               "args[3] (after Authorization)", "'Authorization: Bearer ${TOKEN}' in its place"),
    "user": (["--url", "https://literal0008@mcp.example.com/mcp"], "url (the URL's user name)",
             "--url 'https://${TOKEN}@mcp.example.com/mcp'"),
}


def verb(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, AGENT, "mcp", *args], cwd=cwd, capture_output=True, text=True,
                          env=agent_env(trust=False), timeout=60)


@pytest.mark.parametrize("kind", ADDED)
def test_add_refuses_a_written_out_secret_for_the_project(tmp_path, kind):
    args, where, fix = ADDED[kind]
    done = verb(tmp_path, "add", "-s", "project", "s", *args)
    assert done.returncode == 1 and f"{where} is a secret written out" in done.stderr, done.stderr
    assert fix in done.stderr and "-s local" in done.stderr and "literal000" not in done.stderr
    assert not (tmp_path / ".geekagent").exists()


def test_import_skips_each_for_the_project_and_the_users_file_takes_them_masked(tmp_path):
    """The same from another client's file: each skipped, by its place; with --user all are kept, and
    list and get show none of them (the short one said to be too short to mask)."""
    entries = {"env": {"command": "npx", "args": ["gh"], "env": {"GH_TOKEN": "ghp_literal0001"}},
               "header": {"url": URL, "headers": {"Authorization": "Bearer literal0002"}},
               "flag": {"command": "npx", "args": ["srv", "--api-key", "literal0003"]},
               "password": {"url": "https://app:literal0004@mcp.example.com/mcp"},
               "query": {"url": f"{URL}?api_key=literal0005"},
               "docker": {"command": "docker", "args": ["run", "-e", "GH_TOKEN=literal0006", "img"]},
               "remote": {"command": "npx",
                          "args": ["mcp-remote", URL, "--header", "Authorization: Bearer literal0007"]},
               "user": {"url": "https://literal0008@mcp.example.com/mcp"}}
    (tmp_path / "theirs.json").write_text(json.dumps({"mcpServers": entries}))
    imported = verb(tmp_path, "import", "-s", "project", str(tmp_path / "theirs.json"), "--yes")
    assert imported.returncode == 0 and "0 to import" in imported.stdout, imported.stdout + imported.stderr
    for kind, (_, where, _) in ADDED.items():
        assert f"skipped {kind} " in imported.stdout and f"{where} is a secret written out" in imported.stdout
    assert "literal000" not in imported.stdout + imported.stderr
    for kind, (args, _, _) in ADDED.items():
        done = verb(tmp_path, "add", kind, "--user", *args)
        assert done.returncode == 0, done.stderr
    written = (Path(os.environ["XDG_CONFIG_HOME"]) / "geekagent" / "mcp.json").read_text()
    assert all(f"literal000{n}" in written for n in range(1, 9))
    listed, got = verb(tmp_path, "list", "--json"), verb(tmp_path, "get", "header", "--json")
    assert "literal000" not in listed.stdout + got.stdout, listed.stdout + got.stdout
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["flag"]["args"] == ["srv", "--api-key", "[masked]"]
    assert rows["password"]["url"] == "https://app:[masked]@mcp.example.com/mcp"
    assert rows["query"]["url"] == f"{URL}?api_key=[masked]"
    assert json.loads(got.stdout)["entry"]["headers"] == {"Authorization": "Bearer [masked]"}
    short = verb(tmp_path, "add", "pin", "--user", "--env", "PIN_TOKEN=1234", "--", "npx", "pin")
    assert "note: env PIN_TOKEN is shorter than 8 characters" in short.stderr
