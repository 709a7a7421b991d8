"""The agent's half of skills (beyond/skills/): the catalog in the system prompt, same-named skills apart,
the question before a server's skill loads and its `a` bound to the files, allowed-tools never granted by
loading, the folder's skills under its trust, /skills and /skill; end to end with the scripted model."""
import json
import subprocess
import sys

from beyond.skills.catalog import MAX_CATALOG_SKILLS, Skill, catalog_text
from conftest import AGENT, FAKES, agent_env, assert_no_process_left, run_agent, run_in_pty, workdir
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls


def skill(root, name: str, description: str, body: str = "Body of the skill.", extra: str = "") -> None:
    (root / name / "references").mkdir(parents=True, exist_ok=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n")
    (root / name / "references" / "GUIDE.md").write_text(f"guide of {name}\n")


def server(root, log) -> dict:
    return {"command": sys.executable, "args": [str(FAKES / "skills_server.py"), str(root)],
            "env": {"SKILLS_LOG": str(log)}}


def two_servers(tmp_path, extra: str = "") -> tuple:
    """A folder whose servers a and b serve a skill named pdf each (and a the echo tool's server), and whose
    own .geekagent/skills/ has a pdf too."""
    (tmp_path / "a").mkdir()
    skill(tmp_path / "a", "pdf", "PDF forms of server a", extra=extra)
    skill(tmp_path / "b", "pdf", "PDF tools of server b")
    cwd = workdir(tmp_path / "p", {"a": server(tmp_path / "a", tmp_path / "a.log"),
                                   "b": server(tmp_path / "b", tmp_path / "b.log"),
                                   "x": {"command": sys.executable, "args": [str(FAKES / "fake_server.py")]}})
    skill(cwd / ".geekagent" / "skills", "pdf", "The folder's own PDF notes", body="Folder body.")
    return cwd


def untrusting_terminal(tmp_path) -> dict:
    """A terminal's environment in which the folder is not trusted unless the user says so."""
    env = {**agent_env(key=None, trust=False), "NO_COLOR": "1", "TERM": "xterm"}
    return {**env, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def system_prompt(request: dict) -> str:
    return request["messages"][0]["content"]


def test_same_named_skills_are_all_listed_and_loaded_apart(tmp_path):
    """Two servers' pdf and the folder's pdf: each in the catalog under its own name, the collision said once,
    each loaded by that name; a server's only after the question, which names server, files and size."""
    cwd = two_servers(tmp_path)
    seen = []
    script = [lambda request: seen.append(system_prompt(request)) or tool_calls(
        ("load_skill", {"skill": "a:pdf"}), ("load_skill", {"skill": "b:pdf"}), ("load_skill", {"skill": "pdf"})),
        answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["use the pdf skills", "y", "y", "/exit"], agent_env(model.base_url))
    assert "- a:pdf: PDF forms of server a (MCP server a)" in seen[0]
    assert "- b:pdf: PDF tools of server b (MCP server b)" in seen[0]
    assert "- pdf: The folder's own PDF notes (this folder)" in seen[0]
    assert done.stderr.count("3 skills are named pdf") == 1
    assert "Load skill a:pdf from MCP server a: 'PDF forms of server a' (2 files, " in done.stdout
    assert "[skill a:pdf from MCP server a; untrusted]" in done.stdout
    assert "[skill b:pdf from MCP server b; untrusted]" in done.stdout and "[skill pdf from this folder]" in done.stdout
    assert "Folder body." in done.stdout
    assert (tmp_path / "a.log").read_text().count("resources/read") == 1  # each server read its own, once
    assert (tmp_path / "b.log").read_text().count("resources/read") == 1


def test_the_load_question_comes_with_the_replys_questions_before_any_call_runs(tmp_path):
    """A reply that calls a tool and loads a skill: both questions are asked before either runs."""
    cwd = two_servers(tmp_path)
    script = [tool_calls(("mcp_x_echo", {"text": "first"}), ("load_skill", {"skill": "a:pdf"})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["go", "y", "y", "/exit"], agent_env(model.base_url))
    asked, loaded = done.stdout.index("Load skill a:pdf"), done.stdout.index("[tool mcp_x_echo")
    assert done.stdout.index("wants to run tool 'echo'") < asked < loaded
    assert "Results: first | [skill a:pdf from MCP server a; untrusted]" in done.stdout


def test_no_skill_file_is_read_at_start_or_listing_and_a_no_loads_nothing(tmp_path):
    """Start-up and /skills list the skills and read none of their files; answering no reads none either."""
    cwd = two_servers(tmp_path)
    with FakeOpenAI([tool_calls(("load_skill", {"skill": "a:pdf"})), answer_from_tools]) as model:
        done = run_agent(cwd, ["/skills", "/mcp", "go", "n", "/exit"], agent_env(model.base_url))
    assert "a:pdf  (MCP server a; 2 files, " in done.stdout and "asks before loading" in done.stdout
    assert "a (1 tool, 1 skill)" in done.stdout  # its reader, and its skill
    assert "Not loaded: the user declined skill a:pdf" in done.stdout
    assert "resources/read" not in (tmp_path / "a.log").read_text()
    assert "skills/list" in (tmp_path / "a.log").read_text()


def test_an_always_is_bound_to_the_files_and_asked_again_when_one_changes(tmp_path):
    """`a` lets -p load the skill as it is; after one file's bytes change, -p declines and the REPL asks
    again, saying it changed."""
    cwd = two_servers(tmp_path)
    load = [tool_calls(("load_skill", {"skill": "a:pdf"})), answer_from_tools]
    with FakeOpenAI(load) as model:
        run_agent(cwd, ["load it", "a", "/exit"], agent_env(model.base_url))
    with FakeOpenAI(list(load)) as model:
        quiet = subprocess.run([sys.executable, AGENT, "-p", "load it"], cwd=cwd, capture_output=True, text=True,
                               env=agent_env(model.base_url), timeout=30)
    assert "[skill a:pdf from MCP server a; untrusted]" in quiet.stdout
    (tmp_path / "a" / "pdf" / "references" / "GUIDE.md").write_text("a new guide\n")
    with FakeOpenAI(list(load)) as model:
        quiet = subprocess.run([sys.executable, AGENT, "-p", "load it"], cwd=cwd, capture_output=True, text=True,
                               env=agent_env(model.base_url), timeout=30)
    assert_no_process_left(cwd)
    assert "Not loaded: the user declined skill a:pdf" in quiet.stdout
    with FakeOpenAI(list(load)) as model:
        again = run_agent(cwd, ["load it", "n", "/exit"], agent_env(model.base_url))
    assert "It changed since you allowed it" in again.stdout


def test_allowed_tools_are_not_granted_by_loading(tmp_path):
    """A skill's allowed-tools: a question of its own whose default is no; said no, the tool still asks."""
    cwd = two_servers(tmp_path, extra="allowed-tools: mcp_x_echo\n")
    script = [tool_calls(("load_skill", {"skill": "a:pdf"})), tool_calls(("mcp_x_echo", {"text": "hi"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        refused = run_agent(cwd, ["go", "y", "", "n", "/exit"], agent_env(model.base_url))
    assert "asks that these tools run without asking: mcp_x_echo" in refused.stdout
    assert "wants to run tool 'echo'" in refused.stdout  # still asked
    with FakeOpenAI(list(script)) as model:
        granted = run_agent(cwd, ["go", "y", "y", "/exit"], agent_env(model.base_url))
    assert "wants to run tool 'echo'" not in granted.stdout and "| hi" in granted.stdout


def test_read_skill_file_reads_a_loaded_skills_listed_files_from_its_own_server(tmp_path):
    """read_skill_file before a load is refused; after it, a listed file is read from the skill's server."""
    cwd = two_servers(tmp_path)
    script = [tool_calls(("read_skill_file", {"skill": "b:pdf", "path": "references/GUIDE.md"})),
              tool_calls(("load_skill", {"skill": "b:pdf"})),
              tool_calls(("read_skill_file", {"skill": "b:pdf", "path": "references/GUIDE.md"}),
                         ("read_skill_file", {"skill": "b:pdf", "path": "references/NOPE.md"})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["go", "y", "/exit"], agent_env(model.base_url))
    assert "skill b:pdf is not loaded: call load_skill first" in done.stdout
    assert "guide of pdf" in done.stdout and "is not a file of skill pdf" in done.stdout
    assert "GUIDE.md" not in (tmp_path / "a.log").read_text()
    assert (tmp_path / "b.log").read_text().count("resources/read skill://pdf/references/GUIDE.md") == 1


def test_the_catalog_is_bounded():
    """Past MAX_CATALOG_SKILLS, the catalog says how many more there are; descriptions are cut."""
    skills = [Skill(f"s:n{i}", f"n{i}", "d" * 1000, "server", server="s") for i in range(MAX_CATALOG_SKILLS + 7)]
    text = catalog_text(skills)
    assert text.count("\n- s:n") == MAX_CATALOG_SKILLS and "and 7 more skills, not listed here" in text
    assert len(text) < MAX_CATALOG_SKILLS * 260 + 500


def test_the_folders_skills_are_part_of_its_trust(tmp_path):
    """The trust question shows each skill of the folder (files, size, digest); a changed skill asks again."""
    cwd = workdir(tmp_path, {})
    skill(cwd / ".geekagent" / "skills", "notes", "Team notes")
    screen = run_in_pty([sys.executable, AGENT], cwd, untrusting_terminal(tmp_path), [
        ("Trust this folder", "y\r"), ("> ", "/skills\r"), ("> ", "/exit\r")])
    assert "skill notes: 2 files," in screen and "offer its skills to the model" in screen
    assert "notes  (this folder; 2 files" in screen
    changed = "---\nname: notes\ndescription: Changed\n---\nx\n"
    (cwd / ".geekagent" / "skills" / "notes" / "SKILL.md").write_text(changed)
    screen = run_in_pty([sys.executable, AGENT], cwd, untrusting_terminal(tmp_path), [
        ("Trust this folder", "n\r"), ("> ", "/skills\r"), ("> ", "/exit\r")])
    assert ".geekagent/skills changed since you trusted this folder" in screen
    assert "(no skills)" in screen


def test_yours_one_server_twice_and_two_of_one_name_on_one_server_are_told_apart(tmp_path):
    """Your own skill, one server under two names and a server with two skills named pdf (nested mode: the second
    under team/): each listed under its own name, each loadable by it, /skill loads yours into the conversation."""
    skill(tmp_path / "root", "pdf", "PDF of the server")
    skill(tmp_path / "config" / "geekagent" / "skills", "pdf", "Your own PDF notes", body="Your body.")
    twice = {"command": sys.executable, "args": [str(FAKES / "skills_server.py"), str(tmp_path / "root"), "nested"]}
    cwd = workdir(tmp_path / "p", {"one": twice, "two": dict(twice)})
    with FakeOpenAI([answer_from_tools]) as model:
        env = {**agent_env(model.base_url), "XDG_CONFIG_HOME": str(tmp_path / "config")}
        done = run_agent(cwd, ["/skills", "/skill pdf", "/history", "what did it say?", "/exit"], env)
    assert model.violations == []  # the load stands in the conversation as a valid call and its result
    for label in ("one:pdf ", "one:team/pdf ", "two:pdf ", "two:team/pdf ", "pdf  (yours"):
        assert f"  {label}" in done.stdout, label
    assert "loaded pdf into the conversation" in done.stdout
    assert "  tool      [skill pdf from yours]" in done.stdout  # a tool's result, never the user's words


def test_a_denied_load_skill_is_not_offered_and_mcp_remove_takes_the_cache_away(tmp_path):
    """GeekAgent.json may deny load_skill (never run); a loaded skill's files are cached (0600) and `mcp remove`
    removes them."""
    cwd = two_servers(tmp_path)
    env = {**agent_env(), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    with FakeOpenAI([tool_calls(("load_skill", {"skill": "a:pdf"})), answer_from_tools]) as model:
        run_agent(cwd, ["go", "y", "/exit"], {**env, "OPENAI_BASE_URL": model.base_url})
    cached = [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and p.name != "origin.json"]
    assert len(cached) == 1 and cached[0].stat().st_mode & 0o777 == 0o600
    removed = subprocess.run([sys.executable, AGENT, "mcp", "remove", "a"], cwd=cwd, capture_output=True, text=True,
                             env=env, timeout=30)
    assert removed.returncode == 0 and not cached[0].exists()
    (cwd / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": {"load_skill": "deny"}}))
    seen = []
    with FakeOpenAI([lambda request: seen.append(request.get("tools", [])) or answer_from_tools(request),
                     tool_calls(("load_skill", {"skill": "b:pdf"})), answer_from_tools]) as model:
        done = run_agent(cwd, ["hello", "go", "/exit"], {**env, "OPENAI_BASE_URL": model.base_url})
    assert "load_skill" not in [t["function"]["name"] for t in seen[0]]
    assert "Denied: the tool load_skill is not allowed" in done.stdout
    assert "resources/read" not in (tmp_path / "b.log").read_text()


def test_while_a_servers_skill_is_loaded_another_servers_reader_asks_naming_both(tmp_path):
    """A read of server b's resources, allowed by GeekAgent.json, runs unasked; once a's skill is loaded (whose
    text may have asked for it) it asks, naming both servers, without `a` offered."""
    cwd = two_servers(tmp_path)
    (cwd / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": {"mcp_b_read_resource": "allow"}}))
    read = tool_calls(("mcp_b_read_resource", {"uri": "note://one"}))
    script = [read, tool_calls(("load_skill", {"skill": "a:pdf"})), read, answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["go", "y", "n", "/exit"], agent_env(model.base_url))
    assert done.stdout.count("read resource note://one") == 1
    assert "MCP server 'b': read resource note://one, while skills of MCP server a are loaded (their text may ask " \
           "for it)? Allow? [y/N] " in done.stdout
    assert (tmp_path / "b.log").read_text().count("resources/read note://one") == 1


def test_while_a_servers_skill_is_loaded_another_servers_allowed_tool_asks(tmp_path):
    """mcp_x_echo, allowed by GeekAgent.json, runs unasked; after a's skill loads it asks, naming a (no skill's
    words run a tool of another server unasked), unless the user granted it to the skill."""
    cwd = two_servers(tmp_path)
    (cwd / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": {"mcp_x_echo": "allow"}}))
    echo = tool_calls(("mcp_x_echo", {"text": "hi"}))
    with FakeOpenAI([echo, tool_calls(("load_skill", {"skill": "b:pdf"})), echo, answer_from_tools]) as model:
        done = run_agent(cwd, ["go", "y", "n", "/exit"], agent_env(model.base_url))
    assert done.stdout.count("wants to run tool 'echo'") == 1
    assert "with {\"text\": \"hi\"}, while skills of MCP server b are loaded (their text may ask for it). Allow? " \
           "[y/N] " in done.stdout


def test_a_cloned_folder_of_deep_folders_or_odd_names_leaves_its_skills_out_and_starts(tmp_path):
    """A skill of 40 nested folders and one whose folder is named `a:b` are left out, said; the agent starts."""
    cwd = workdir(tmp_path, {})
    skill(cwd / ".geekagent" / "skills", "deep", "Deep")
    deep = cwd / ".geekagent" / "skills" / "deep" / "/".join(["d"] * 40)
    deep.mkdir(parents=True)
    (deep / "f.md").write_text("x")
    skill(cwd / ".geekagent" / "skills", "a:b", "Odd")
    done = run_agent(cwd, ["/skills", "/exit"], agent_env())
    assert done.returncode == 0, done.stderr
    assert "skill 'deep' is left out: over 2048 entries or 16 folders deep" in done.stdout
    assert "skill 'a:b' is left out: a skill's folder is named with lowercase letters" in done.stdout
