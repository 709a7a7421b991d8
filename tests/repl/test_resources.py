"""Resources and prompts (tutorial sections 3.1 and 6 leave them out): listed, read, attached, used."""
import re

from beyond.servers import toolset
from conftest import agent_env, demo, fake, policy_of, run_agent, run_call, set_tool_policy, workdir
from fakes.http_server import FakeHttpMcp
from fakes.openai_server import FakeOpenAI, answer, answer_from_tools, tool_calls


def test_resources_listed_read_and_attached(tmp_path):
    """/resources lists resources and templates; /read shows text and describes a blob; @server:uri attaches."""
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    with FakeOpenAI([answer("noted")]) as model:
        done = run_agent(cwd, ["/resources", "/read ctx demo://notes/today", "/read ctx demo://logo.png",
                               "/read ctx demo://nope", "what is on @ctx:demo://notes/today ?", "/exit"],
                         agent_env(model.base_url))
    assert "ctx (3)" in done.stdout and "demo://notes/{day}  (template)" in done.stdout
    assert "Buy milk. Call Ada." in done.stdout and "[resource: demo://logo.png, image/png, 8 bytes]" in done.stdout
    assert "no resource demo://nope" in done.stdout
    (user,) = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert user == "what is on @ctx:demo://notes/today ?\n\n[resource ctx:demo://notes/today]\nBuy milk. Call Ada."
    assert "(attached @ctx:demo://notes/today, 19 characters)" in done.stdout  # said on screen


def test_model_reads_a_resource_through_a_tool_that_asks(tmp_path):
    """A server with resources gets mcp_<server>_read_resource; it asks before reading."""
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    script = [tool_calls(("mcp_ctx_read_resource", {"uri": "demo://notes/today"})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["read my notes", "y", "/exit"], agent_env(model.base_url))
    assert "read resource demo://notes/today? Allow?" in done.stdout
    assert "Results: Buy milk. Call Ada." in done.stdout


def test_prompts_listed_checked_and_sent(tmp_path):
    """/prompts shows arguments; a missing required one gets a usage line; a complete one is the next turn."""
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    with FakeOpenAI([answer("looks fine")]) as model:
        done = run_agent(cwd, ["/prompts", "/prompt ctx review", "/prompt ctx review code=x+1 focus=bugs", "/exit"],
                         agent_env(model.base_url))
    assert "review code=... [focus=...]" in done.stdout and "(missing: code)" in done.stdout
    assert [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"] == [
        "Review this code for bugs: x+1"]
    assert "looks fine" in done.stdout


def test_list_changes_are_seen_at_once(tmp_path):
    """Resources and prompts are listed live: after the server announces a change, /resources and
    /prompts show the new ones."""
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    done = run_agent(cwd, ["/call mcp_ctx_more_context {}", "y", "/resources", "/prompts", "/exit"],
                     agent_env(key=None))
    assert "added" in done.stdout
    assert "ctx (4)" in done.stdout and "demo://notes/tomorrow" in done.stdout
    assert "summarize [text=...]" in done.stdout


def test_resources_and_prompts_of_a_remote_server(tmp_path):
    """The same commands against a server over Streamable HTTP."""
    with FakeHttpMcp("context") as server:
        cwd = workdir(tmp_path, {"web": {"type": "http", "url": server.url}})
        with FakeOpenAI([answer("hello sent")]) as model:
            done = run_agent(cwd, ["/resources", "/read web remote://motd", "/prompts", "/prompt web greet who=Ada",
                                   "/exit"], agent_env(model.base_url))
    assert "web (2)" in done.stdout and "remote://logs/{day}  (template)" in done.stdout
    assert "text of remote://motd" in done.stdout and "greet who=..." in done.stdout
    assert [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"] == ["Say hello to Ada."]


def test_a_prompt_never_reads_what_its_text_mentions(tmp_path):
    """@server:uri in a server's prompt text is sent as text: the other server's resource is not read."""
    mention = "Summarize @other:demo://notes/today please"
    cwd = workdir(tmp_path, {"ctx": fake("context", env={"PROMPT_TEXT": mention}), "other": fake("context")})
    with FakeOpenAI([answer("ok"), answer("ok")]) as model:
        run_agent(cwd, ["/prompt ctx review code=1", mention, "/exit"], agent_env(model.base_url))
    from_prompt, typed = ([m["content"] for m in r["messages"] if m["role"] == "user"][-1] for r in model.requests)
    assert from_prompt == mention
    assert typed.endswith("Buy milk. Call Ada.")  # the same words typed by the user are read


def test_a_reader_only_for_a_server_that_lists_resources(tmp_path):
    """Both servers declare resources; the one that lists none (and has no templates) gets no reader,
    and the count at start-up is the count /mcp shows."""
    cwd = workdir(tmp_path, {"ctx": fake("context"), "bare": fake("empty_context")})
    done = run_agent(cwd, ["/mcp", "/mcp ctx", "/mcp bare", "/exit"], agent_env(key=None))
    assert "mcp_ctx_read_resource" in done.stdout and "mcp_bare_read_resource" not in done.stdout
    for server in ("ctx", "bare"):
        counts = re.findall(rf"\b{server} \((\d+) tools\)", done.stdout)
        assert len(counts) == 3 and len(set(counts)) == 1, done.stdout
    assert int(re.search(r"\bctx \((\d+) tools\)", done.stdout).group(1)) == \
        int(re.search(r"\bbare \((\d+) tools\)", done.stdout).group(1)) + 1


def test_a_server_that_gains_resources_gets_its_reader(tmp_path):
    """A server that lists no resources at start gets its reader once it says its resources changed
    and then lists some; @ completion knows the new URI."""
    import beyond_mcp
    from conftest import connect, wait_until
    client = connect(tmp_path, {"bare": fake("empty_context")})["bare"].client
    assert client.listed == [] and toolset.get("mcp_bare_read_resource") is None
    set_tool_policy("mcp_bare_more_context", "allow")
    assert run_call("mcp_bare_more_context", "{}") == "added"
    assert wait_until(lambda: toolset.get("mcp_bare_read_resource") is not None)
    assert client.listed == ["demo://notes/tomorrow"]
    assert "mcp_bare_read_resource" in beyond_mcp.mcp_statuses()[0].tools
    assert policy_of("mcp_bare_read_resource") == "ask"  # a reader asks, like any tool
    set_tool_policy("mcp_bare_read_resource", "allow")
    assert run_call("mcp_bare_read_resource", '{"uri": "demo://notes/tomorrow"}') == "Rest."


def test_empty_lists_say_so_and_tool_search_is_shown_as_not_offered(tmp_path):
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ["/history", "/resources", "/prompts", "/tools", "/exit"], agent_env(key=None))
    assert "(no messages yet)" in done.stdout
    assert "(no server offers resources)" in done.stdout and "(no server offers prompts)" in done.stdout
    assert re.search(r"tool_search  \(not offered now: every tool is\)", done.stdout)
