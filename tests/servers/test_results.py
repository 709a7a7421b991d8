"""Big results kept whole and read back by pages (beyond/servers/results.py); structuredContent checked
against the tool's outputSchema (beyond/client/schema.py)."""
import json
import os
import re
import stat
import time

import pytest

import beyond.client.schema as beyond_schema
import beyond.servers.results as beyond_results
import chat
import tools
from beyond.servers.calls import Calls
from conftest import connect, fake, set_tool_policy
from fakes.openai_server import answer, tool_calls
from fakes.patterns import pattern_text


@pytest.fixture
def keeping(model, monkeypatch, tmp_path):
    """The full agent's calls, keeping a long result whole (as agent.py sets them up), the model's too."""
    calls = Calls(keep=beyond_results.keep)
    model.calls = calls
    monkeypatch.chdir(tmp_path)  # the project folder: nothing may be written here
    return calls


def page_reader(request: dict) -> dict:
    """A model that reads a kept result to its end, three pages a reply, then says it is done."""
    results = [m["content"] for m in request["messages"] if m["role"] == "tool"]
    where = re.search(r"\[(r-[0-9a-f-]+\.txt): characters [\d,]+ to [\d,]+ of [\d,]+; (the end|next offset (\d+))\]",
                      results[-1])
    if where and where.group(2) == "the end":
        return answer("read it all")
    result_id = where.group(1) if where else re.search(r'kept as "(r-[0-9a-f-]+\.txt)"', results[-1]).group(1)
    offset = int(where.group(3)) if where else 0
    step = beyond_results.MAX_PAGE_CHARS
    return tool_calls(*[("read_result", {"id": result_id, "offset": offset + i * step, "length": step})
                        for i in range(3)])


def test_a_2_mb_result_comes_back_whole_through_read_result(model, tmp_path, endpoint, keeping, own_user_dirs):
    """The model gets the head, the tail, the size and an id; paging with read_result over several
    replies gives back every character, each reply within its budget; the file is the user's, 0600."""
    connect(tmp_path, {"fake": fake("normal")})
    size = 2_000_000
    fake_model = endpoint(tool_calls(("mcp_fake_pattern", {"size": size})), *[page_reader] * 12)
    set_tool_policy("mcp_fake_pattern", "allow")
    history = chat.new_history()
    assert model.run_turn(history, "get it") == "read it all"
    expected = pattern_text(size)
    first = next(m["content"] for m in history if m["role"] == "tool")
    assert first.startswith(expected[:beyond_results.HEAD_CHARS])
    assert first.endswith(expected[-beyond_results.TAIL_CHARS:])
    assert f"characters not shown of {size:,}" in first and len(first) < tools.MAX_RESULT_CHARS
    pages = [m["content"] for m in history if m["role"] == "tool"][1:]
    read = "".join(page.split("\n", 1)[1] for page in pages)
    assert read[:size] == expected and read[size:] == ""  # the pages after the end are empty
    replies = [m for m in history if m["role"] == "assistant" and m.get("tool_calls")][1:]
    assert len(replies) >= 7 and fake_model.violations == []
    assert all("more characters cut" not in page for page in pages)
    kept = os.listdir(own_user_dirs / "state" / "geekagent" / "results")
    assert len(kept) == 1 and kept[0] in first
    assert stat.S_IMODE(os.stat(own_user_dirs / "state" / "geekagent" / "results" / kept[0]).st_mode) == 0o600
    assert os.listdir(tmp_path) == ["mcp.json"]  # nothing in the project folder


@pytest.mark.parametrize("result_id", ["../oauth.json", "/etc/passwd", "r-1-000000000000.txt/../../x", 7, None])
def test_read_result_reads_ids_only_never_a_path(keeping, result_id):
    tools.register_tool(tools.Tool("long", "", {"type": "object"}, lambda args: "z" * 200_000))
    set_tool_policy("long", "allow")
    assert "kept as" in keeping.run("long", "{}")
    result = keeping.run("read_result", json.dumps({"id": result_id}))
    assert result.startswith("Error: read_result failed:") and "it is no path" in result


def test_an_id_that_is_gone_says_so(keeping):
    tools.register_tool(tools.Tool("long", "", {"type": "object"}, lambda args: "z" * 200_000))
    set_tool_policy("long", "allow")
    result_id = re.search(r'kept as "([^"]+)"', keeping.run("long", "{}")).group(1)
    os.unlink(os.path.join(beyond_results.folder(), result_id))
    assert "is no longer kept" in keeping.run("read_result", json.dumps({"id": result_id}))


def test_what_is_kept_is_bounded_in_size_and_age(keeping, monkeypatch):
    """Past MAX_KEPT_BYTES the oldest go; past MAX_AGE_S any goes; the newest is always there."""
    monkeypatch.setattr(beyond_results, "MAX_KEPT_BYTES", 450_000)
    tools.register_tool(tools.Tool("long", "", {"type": "object"}, lambda args: args["c"] * 200_000))
    set_tool_policy("long", "allow")
    ids = [re.search(r'kept as "([^"]+)"', keeping.run("long", json.dumps({"c": c}))).group(1) for c in "abc"]
    assert sorted(os.listdir(beyond_results.folder())) == sorted(ids[1:])
    old = time.time() - beyond_results.MAX_AGE_S - 10
    os.utime(os.path.join(beyond_results.folder(), ids[2]), (old, old))
    keeping.run("long", json.dumps({"c": "d"}))
    assert ids[2] not in os.listdir(beyond_results.folder()) and len(os.listdir(beyond_results.folder())) == 2


def test_a_structured_result_that_does_not_match_the_output_schema_is_an_error_the_model_reads(model, tmp_path,
                                                                                              endpoint):
    """typed's outputSchema wants {"count": integer >= 0} and nothing else: 3 passes, "three" and an extra
    key reach the model as errors that say where."""
    connect(tmp_path, {"fake": fake("normal")})
    set_tool_policy("mcp_fake_typed", "allow")
    fake_model = endpoint(tool_calls(("mcp_fake_typed", {"count": 3}), ("mcp_fake_typed", {"count": "three"}),
                                     ("mcp_fake_typed", {"count": 1, "more": True})), answer("ok"))
    model.run_turn(chat.new_history(), "go")
    results = [m["content"] for m in fake_model.requests[1]["messages"] if m["role"] == "tool"]
    assert results[0] == '{"count": 3}'
    assert results[1].startswith("Error: mcp_fake_typed failed:")
    assert "does not match the tool's outputSchema" in results[1]
    assert "at $.count: expected integer, got string" in results[1]
    assert '"more" is not allowed' in results[2]


@pytest.mark.parametrize("value, schema, problem", [
    ({"a": [1, 2, "x"]}, {"properties": {"a": {"type": "array", "items": {"type": "integer"}}}},
     "at $.a[2]: expected integer"),
    (True, {"type": "integer"}, "expected integer, got boolean"),
    (2.0, {"type": "integer"}, None),
    ("b", {"enum": ["a", 1]}, 'is not one of'),
    (1.0, {"enum": [1]}, None),
    ({}, {"required": ["id"]}, '"id" is required'),
    (5, {"oneOf": [{"type": "integer"}, {"type": "number"}]}, "matches 2 of the oneOf"),
    ("s", {"anyOf": [{"type": "integer"}, {"$ref": "#/definitions/s"}], "definitions": {"s": {"type": "string"}}},
     None),
    ({"x": 1}, {"$ref": "https://example.com/schema.json"}, None),  # never fetched: nothing to check against
    ({"n": {"n": {"n": 5}}}, {"$defs": {"t": {"type": "object", "properties": {"n": {"$ref": "#/$defs/t"}}}},
                              "$ref": "#/$defs/t"}, "at $.n.n.n: expected object, got integer"),
    ({"x": 1}, {"minProperties": 9, "type": "object"}, None),  # unknown to this checker: ignored
])
def test_the_schema_check(value, schema, problem):
    found = beyond_schema.mismatch(value, schema)
    assert (found is None) if problem is None else (problem in found), found


def test_a_schema_that_would_take_forever_stops_being_checked(monkeypatch):
    """Nested anyOf, every option checked, two of them recursive, over lists of two: 4^15 checks; it stops
    at MAX_STEPS (15 levels stay within MAX_DEPTH, so the budget of steps is what stops it)."""
    recursive = {"items": {"$ref": "#/$defs/d"}}
    schema = {"$defs": {"d": {"anyOf": [{"type": "string"}, recursive, dict(recursive)]}}, "$ref": "#/$defs/d"}
    value = 0
    for _ in range(15):
        value = [value, value]
    checks, check = [], beyond_schema._check
    monkeypatch.setattr(beyond_schema, "_check", lambda *args: checks.append(1) or check(*args))
    assert beyond_schema.mismatch(value, schema) is None  # what was checked stands; the rest is not checked
    assert beyond_schema.MAX_STEPS <= len(checks) <= beyond_schema.MAX_STEPS + 1
