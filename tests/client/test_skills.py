"""The client's half of skills (client/skills.py): listed without a read, loaded and read only as verified,
an unlisted file refused without a request; against a scripted session and a real server process."""
import hashlib
import sys

import pytest

import beyond_mcp
from beyond.client.skill_entries import MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS
from beyond.client.skills import MAX_LISTED_SKILLS, MAX_PROBLEMS, ServedSkills, SkillRefused
from beyond.skills.cache import SkillCache
from beyond.client.config import parse_server_config
from conftest import FAKES

BODY = "---\nname: pdf\ndescription: Work with PDF files\n---\nBody.\n"
FORMS = "Forms guide\n"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entry(body: str = BODY, front: dict | None = None, extra: list | None = None) -> dict:
    files = [{"uri": "skill://pdf/SKILL.md", "digest": digest(body), "size": len(body.encode())},
             {"uri": "skill://pdf/references/FORMS.md", "digest": digest(FORMS), "size": len(FORMS)}]
    front = front or {"name": "pdf", "description": "Work with PDF files"}
    return {"uri": "skill://pdf/SKILL.md", "frontmatter": front, "resources": files + (extra or [])}


class Scripted(ServedSkills):
    """A session of the extension's methods, its server scripted: each request recorded and answered."""

    def __init__(self, listed: list, served: dict, declared: dict | None = None, got: dict | None = None) -> None:
        super().__init__()
        self.name, self.cfg = "s", parse_server_config("s", {"command": "x"})
        self.capabilities = {"extensions": {SKILLS: declared or {}}} if declared is not False else {}
        self.listed, self.served, self.got, self.sent, self.logged = listed, served, got, [], []

    def request(self, method: str, params: dict, call=None) -> dict:
        self.sent.append((method, params.get("uri")))
        if method == "skills/list":
            return {"skills": self.listed}
        if method == "skills/get":
            return {"skill": self.got} if self.got else {}
        return {"contents": [{"uri": params["uri"], "text": self.served[params["uri"]]}]}

    def log(self, text: str) -> None:
        self.logged.append(text)


def served(body: str = BODY) -> dict:
    return {"skill://pdf/SKILL.md": body, "skill://pdf/references/FORMS.md": FORMS}


def test_listing_reads_no_file_and_a_load_reads_skill_md_alone():
    """skills/list reads nothing; load_skill reads SKILL.md only; its file is read when asked for, verified."""
    client = Scripted([entry()], served())
    (listed,) = client.list_skills()
    assert listed.name == "pdf" and client.sent == [("skills/list", None)]
    assert client.load_skill("skill://pdf/SKILL.md") == BODY
    assert client.sent[1:] == [("resources/read", "skill://pdf/SKILL.md")]
    assert client.read_skill_file("skill://pdf/SKILL.md", "references/FORMS.md") == FORMS.encode()


@pytest.mark.parametrize("body, check", [
    (BODY.replace("Body", "Evil"), "digest check: the entry says sha256:"),
    (BODY + "more", "size check: the entry says 57 bytes, the file read has 61"),
])
def test_a_skill_md_that_differs_from_its_entry_is_refused_naming_the_check(body, check):
    """Size is checked before the digest; the error names the check, the URI and both values; the entry is
    asked for again once (skills/get), and nothing of the skill is used or read further."""
    client = Scripted([entry()], served(body))
    client.list_skills()
    with pytest.raises(SkillRefused) as refused:
        client.load_skill("skill://pdf/SKILL.md")
    assert check in str(refused.value) and "skill://pdf/SKILL.md" in str(refused.value)
    if "digest" in check:
        assert digest(body)[:19] in str(refused.value) and digest(BODY)[:19] in str(refused.value)
    assert client.sent[1:] == [("resources/read", "skill://pdf/SKILL.md"), ("skills/get", "skill://pdf/SKILL.md")]
    assert client.loaded_skills == {}


def test_front_matter_that_differs_from_the_entry_is_refused_field_by_field():
    """The conformance suite's case: size and digest fit the file, its description does not fit the entry."""
    body = BODY.replace("Work with PDF files", "Exfiltrate credentials")
    client = Scripted([entry(body)], served(body))
    client.list_skills()
    with pytest.raises(SkillRefused, match=r"front matter check \(description\): .*Work with PDF files.*"
                                            "Exfiltrate credentials"):
        client.load_skill("skill://pdf/SKILL.md")
    with pytest.raises(SkillRefused, match="not loaded"):
        client.read_skill_file("skill://pdf/SKILL.md", "references/FORMS.md")
    assert ("resources/read", "skill://pdf/references/FORMS.md") not in client.sent


def test_an_unlisted_file_fails_without_a_request_and_paths_stay_in_the_skill():
    """A file the held entry does not list, or a path out of the skill's folder, sends nothing."""
    client = Scripted([entry()], served())
    client.list_skills()
    client.load_skill("skill://pdf/SKILL.md")
    sent = list(client.sent)
    for path in ("references/NEW.md", "skill://other/SKILL.md"):
        with pytest.raises(SkillRefused, match="is not a file of skill pdf"):
            client.read_skill_file("skill://pdf/SKILL.md", path)
    for path in ("../other/SKILL.md", "/etc/passwd"):
        with pytest.raises(SkillRefused, match="within the skill's folder"):
            client.read_skill_file("skill://pdf/SKILL.md", path)
    assert client.sent == sent


def test_skills_over_the_limits_or_dynamic_are_declined_before_any_read():
    """513 files, or 16 MiB and a byte, or "dynamic": declined with the reason, nothing read."""
    many = [{"uri": f"skill://pdf/f{i}", "digest": digest(""), "size": 0} for i in range(MAX_SKILL_FILES - 1)]
    big = [{"uri": "skill://pdf/big", "digest": digest(""), "size": MAX_SKILL_BYTES}]
    dynamic = {**entry(), "resources": "dynamic"}
    client = Scripted([entry(extra=many), {**entry(extra=big), "uri": "skill://big/pdf/SKILL.md"}], served())
    client.listed[1]["resources"] = [{**r, "uri": r["uri"].replace("skill://", "skill://big/")}
                                     for r in client.listed[1]["resources"]]
    client.list_skills()
    with pytest.raises(SkillRefused, match=f"has 513 files; skills of at most {MAX_SKILL_FILES}"):
        client.load_skill("skill://pdf/SKILL.md")
    with pytest.raises(SkillRefused, match="16,777,216 are loaded"):
        client.load_skill("skill://big/pdf/SKILL.md")
    client.listed = [dynamic]
    client.list_skills()
    with pytest.raises(SkillRefused, match="serves its files dynamically: they cannot be verified"):
        client.load_skill("skill://pdf/SKILL.md")
    assert [m for m, _ in client.sent] == ["skills/list", "skills/list"]


def test_invalid_entries_are_left_out_with_a_reason_and_undeclared_servers_get_no_request():
    """An entry without resources, with a bad digest or a file outside it is left out, said; without the
    extension declared, list_skills and get_skill raise before any request."""
    bad = [{**entry(), "resources": None}, {**entry(), "uri": "skill://other/SKILL.md"},
           entry(extra=[{"uri": "skill://elsewhere/x", "digest": digest(""), "size": 0}]),
           entry(extra=[{"uri": "skill://pdf/x", "digest": "md5:00", "size": 0}])]
    client = Scripted(bad + [entry()], served())
    assert len(client.list_skills()) == 1 and len(client.skill_problems) == 4
    assert any("neither a list of files" in p for p in client.skill_problems)
    undeclared = Scripted([entry()], served(), declared=False)
    for call in (undeclared.list_skills, lambda: undeclared.get_skill("skill://pdf/SKILL.md")):
        with pytest.raises(beyond_mcp.McpError, match="did not declare the skills extension"):
            call()
    assert undeclared.sent == []


def test_a_skill_known_only_by_its_uri_is_got_and_an_answer_without_one_is_an_error():
    """get_skill asks for one entry (a listing may be partial); an answer without a skill is an error, once."""
    client = Scripted([], served(), got=entry())
    assert client.load_skill("skill://pdf/SKILL.md") == BODY
    empty = Scripted([], served())
    with pytest.raises(beyond_mcp.McpError, match="no usable skill in the answer"):
        empty.load_skill("skill://pdf/SKILL.md")
    assert empty.sent == [("skills/get", "skill://pdf/SKILL.md")]


def test_directory_read_only_where_declared():
    """resources/directory/read is never sent to a server that did not declare directoryRead."""
    client = Scripted([entry()], served())
    with pytest.raises(beyond_mcp.McpError, match="did not declare directoryRead"):
        client.read_skill_directory("skill://pdf/references")
    assert client.sent == []


def test_the_cache_is_hashed_again_on_every_use(tmp_path, monkeypatch):
    """A cached file changed on disk is not used: it is read from the server again, and checked."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = SkillCache(parse_server_config("s", {"command": "x"}), "s")
    client = Scripted([entry()], served())
    client.skill_cache = cache
    client.list_skills()
    client.load_skill("skill://pdf/SKILL.md")
    (kept,) = [p for p in (tmp_path / "geekagent" / "skills").rglob("*") if p.name.endswith(digest(BODY)[7:39])]
    assert kept.stat().st_mode & 0o777 == 0o600
    assert client.load_skill("skill://pdf/SKILL.md") == BODY and len(client.sent) == 2  # from the cache
    kept.write_text(BODY.replace("Body", "Evil"))
    assert client.load_skill("skill://pdf/SKILL.md") == BODY and client.sent[-1][0] == "resources/read"


def test_a_real_server_process_lists_without_reading_and_loads_on_demand(tmp_path):
    """Over stdio with the handshake: the extension declared both ways, skills listed at start, no file read
    until a load; the server's own log proves it."""
    root = tmp_path / "root"
    (root / "pdf" / "references").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_text(BODY)
    (root / "pdf" / "references" / "FORMS.md").write_text(FORMS)
    log = tmp_path / "log"
    client = beyond_mcp.McpClient("s", {"command": sys.executable, "args": [str(FAKES / "skills_server.py"), str(root)],
                                        "env": {"SKILLS_LOG": str(log)}})
    try:
        client.start()
        assert list(client.skills) == ["skill://pdf/SKILL.md"]
        assert "resources/read" not in log.read_text()
        assert client.load_skill("skill://pdf/SKILL.md") == BODY
        assert log.read_text().count("resources/read") == 1
    finally:
        client.stop()


def test_a_supporting_file_that_changed_is_refused_and_the_entry_asked_for_again():
    """A listed file whose bytes are not what the held entry says is not used; skills/get refreshes the entry."""
    client = Scripted([entry()], {**served(), "skill://pdf/references/FORMS.md": "Forms, rewritten\n"}, got=entry())
    client.list_skills()
    client.load_skill("skill://pdf/SKILL.md")
    with pytest.raises(SkillRefused, match="FORMS.md failed its size check"):
        client.read_skill_file("skill://pdf/SKILL.md", "references/FORMS.md")
    assert client.sent[-1] == ("skills/get", "skill://pdf/SKILL.md")


def test_a_legacy_server_that_declares_skills_but_answers_method_not_found_gets_a_note(tmp_path):
    """skills/list answered -32601 on the handshake: the server starts, and its note says which revision to set."""
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "SKILL.md").write_text(BODY)
    client = beyond_mcp.McpClient("s", {"command": sys.executable,
                                        "args": [str(FAKES / "skills_server.py"), str(tmp_path), "nolist"]})
    try:
        client.start()
        assert client.skills == {} and "serves skills only at MCP 2026-07-28" in client.skills_note
    finally:
        client.stop()


def test_a_listing_of_many_bad_entries_is_bounded_and_names_that_pass_for_another_are_refused():
    """Thousands of invalid entries leave MAX_PROBLEMS reasons and a count; a name with a colon is no name."""
    client = Scripted([0] * 5000, served())
    assert client.list_skills() == []
    assert len(client.skill_problems) == MAX_PROBLEMS + 1
    assert client.skill_problems[-1] == f"skills/list: and {MAX_LISTED_SKILLS - MAX_PROBLEMS} more left out"
    colon = {**entry(front={"name": "b:pdf", "description": "d"}), "uri": "skill://b:pdf/SKILL.md"}
    client = Scripted([colon], served())
    assert client.list_skills() == [] and "is not a skill's name" in client.skill_problems[0]
