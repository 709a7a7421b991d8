"""beyond_agent.py -p: one prompt run to its end without a terminal; the answer on stdout, its exit status."""
import json
import re
import signal
import subprocess
import sys

import pytest

from conftest import AGENT, agent_env, assert_no_process_left, demo, fake, wait_until, workdir
from fakes.openai_server import FakeOpenAI, HttpError, answer, answer_from_tools, tool_calls

ROLL_AND_COUNT = [tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": "a b c"})), answer_from_tools]


def run_p(cwd, args, env, stdin=""):
    done = subprocess.run([sys.executable, AGENT, *args], cwd=cwd, input=stdin, capture_output=True, text=True,
                          env=env, timeout=30)
    assert_no_process_left(cwd)
    return done


def test_allowed_tools_run_an_ask_tool_is_refused_and_only_the_answer_is_on_stdout(tmp_path):
    """GeekAgent.json allows dice: it runs; word_count would ask: the model reads why it did not run.
    Nothing is asked, the answer alone is on stdout, the rest on stderr, and the exit status is 0."""
    cwd = workdir(tmp_path, {"demo": demo()}, {"mcp_demo_dice": "allow"})
    with FakeOpenAI(list(ROLL_AND_COUNT)) as model:
        done = run_p(cwd, ["-p", "roll and count"], agent_env(model.base_url))
    assert done.returncode == 0, done.stderr
    tool_messages = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert re.fullmatch(r"rolled [1-6]", tool_messages[0])
    assert tool_messages[1].startswith("not run: mcp_demo_word_count needs the user's approval")
    assert model.requests[0]["messages"][-1] == {"role": "user", "content": "roll and count"}
    assert done.stdout == f"Results: {tool_messages[0]} | {tool_messages[1]}\n"
    assert "demo (2 tools)" in done.stderr and "[tool mcp_demo_dice -> rolled" in done.stderr
    assert "Allow?" not in done.stdout + done.stderr


def test_an_a_given_in_the_repl_lets_the_tool_run_under_p_and_json_says_so(tmp_path):
    """`a` is the user's own "always": -p runs the tool, and --json names the `a` as what allowed it."""
    from conftest import run_agent
    cwd = workdir(tmp_path, {"demo": demo()})
    run_agent(cwd, ["/call mcp_demo_dice {}", "a", "/exit"], agent_env(key=None))
    with FakeOpenAI([tool_calls(("mcp_demo_dice", {})), answer_from_tools]) as model:
        done = run_p(cwd, ["--json", "-p", "roll"], agent_env(model.base_url))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tool_calls"] == [{"name": "mcp_demo_dice", "arguments": {}, "outcome": "ok",
                                                      "allowed_by": "a"}]


def test_json_gives_the_answer_the_calls_and_their_outcomes_and_the_usage(tmp_path):
    """--json prints one object; each call with its arguments and outcome; tokens summed over requests."""
    cwd = workdir(tmp_path, {"demo": demo()}, {"mcp_demo_dice": "allow"})
    with FakeOpenAI(list(ROLL_AND_COUNT)) as model:
        done = run_p(cwd, ["--json", "-p", "-"], agent_env(model.base_url), stdin="roll and count\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answer"].startswith("Results: rolled ")
    assert result["tool_calls"] == [{"name": "mcp_demo_dice", "arguments": {}, "outcome": "ok",
                                     "allowed_by": "GeekAgent.json"},
                                    {"name": "mcp_demo_word_count", "arguments": {"text": "a b c"},
                                     "outcome": "refused"}]
    assert result["usage"] == {"prompt_tokens": 1234 * 2, "completion_tokens": 56 * 2}
    assert model.requests[0]["messages"][-1]["content"] == "roll and count\n"  # from stdin, as it came


@pytest.mark.parametrize("as_json", [False, True])
def test_a_failing_model_exits_1(tmp_path, as_json):
    """A model that refuses (401) is not an answer: exit 1, the error on stderr (and in the JSON), stdout
    empty without --json."""
    cwd = workdir(tmp_path, {})
    with FakeOpenAI([HttpError(401, '{"error": {"message": "bad key"}}')]) as model:
        done = run_p(cwd, ["-p", "hi"] + (["--json"] if as_json else []), agent_env(model.base_url))
    assert done.returncode == 1
    assert "error: HTTP 401" in done.stderr and "bad key" in done.stderr
    if as_json:
        result = json.loads(done.stdout)
        assert result["answer"] is None and "HTTP 401" in result["error"] and result["tool_calls"] == []
    else:
        assert done.stdout == ""


def test_no_model_configured_exits_1(tmp_path):
    done = run_p(workdir(tmp_path, {}), ["-p", "hi"], agent_env(key=None))
    assert done.returncode == 1 and "No OPENAI_API_KEY set" in done.stderr and done.stdout == ""
    assert done.stderr.count("No OPENAI_API_KEY set") == 1 and "/call" not in done.stderr  # once, and no REPL advice


def test_help_describes_every_flag_of_its_usage_line():
    from beyond.repl.options import FLAGS, USAGE
    described = [line.split()[0] for line in USAGE.splitlines()[1:] if line.startswith("  -")]
    assert set(FLAGS) <= set(described) and {"-p", "--json"} <= set(described)


@pytest.mark.parametrize("args, says", [
    (["-p"], "-p needs the prompt"), (["--json"], "--json goes with -p"), (["-p", "  "], "the prompt is empty"),
    (["-p", "hi", "--tutorial"], "unknown option --tutorial"),
    (["-p", "hi", "--jsn"], "unknown option --jsn"),
    (["-p", "a", "-p", "b"], "-p is given twice; one run takes one prompt"),
])
def test_a_command_line_that_cannot_run_exits_2_with_the_usage(tmp_path, args, says):
    done = run_p(workdir(tmp_path, {}), args, agent_env(key=None))
    assert done.returncode == 2 and says in done.stderr and "usage: python3 day15/beyond_agent.py" in done.stderr
    assert done.stdout == ""


def test_an_untrusted_folder_starts_no_server_unless_trust_is_passed(tmp_path):
    """Without a terminal and without --trust, the folder's servers do not start (said on stderr),
    and what its GeekAgent.json allows is not allowed; with --trust they run."""
    cwd = workdir(tmp_path, {"demo": demo()}, {"mcp_demo_dice": "allow"})
    with FakeOpenAI([answer("no tools here")]) as model:
        done = run_p(cwd, ["-p", "roll"], agent_env(model.base_url, trust=False))
    assert done.returncode == 0 and done.stdout == "no tools here\n"
    assert "not trusted yet, so none of its servers starts" in done.stderr
    assert not any(t["function"]["name"].startswith("mcp_") for t in model.requests[0].get("tools", []))
    with FakeOpenAI([tool_calls(("mcp_demo_dice", {})), answer_from_tools]) as model:
        done = run_p(cwd, ["-p", "roll", "--trust"], agent_env(model.base_url, trust=False))
    assert done.returncode == 0 and re.fullmatch(r"Results: rolled [1-6]\n", done.stdout)


def test_a_mention_in_the_prompt_is_attached(tmp_path):
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    with FakeOpenAI([answer("noted")]) as model:
        done = run_p(cwd, ["-p", "what is on @ctx:demo://notes/today ?"], agent_env(model.base_url))
    assert done.returncode == 0 and done.stdout == "noted\n" and "(attached @ctx:demo://notes/today" in done.stderr
    sent = model.requests[0]["messages"][-1]["content"]
    assert sent.endswith("[resource ctx:demo://notes/today]\nBuy milk. Call Ada.")


@pytest.mark.parametrize("as_json", [False, True])
def test_text_no_encoding_can_carry_still_gives_the_answer(tmp_path, as_json):
    """A lone surrogate in a tool's result and in the model's answer: stdout still gets the answer (or
    one valid JSON object), the unencodable character replaced, and the exit status is 0."""
    cwd = workdir(tmp_path, {"fake": fake("normal")}, {"mcp_fake_lone_surrogate": "allow"})
    script = [tool_calls(("mcp_fake_lone_surrogate", {})), answer("it said \udfff back")]
    with FakeOpenAI(script) as model:
        done = run_p(cwd, ["-p", "echo it"] + (["--json"] if as_json else []), agent_env(model.base_url))
    assert done.returncode == 0, done.stderr
    if as_json:
        result = json.loads(done.stdout)
        assert result["answer"] == "it said ? back"
        assert result["tool_calls"] == [{"name": "mcp_fake_lone_surrogate", "arguments": {}, "outcome": "ok",
                                         "allowed_by": "GeekAgent.json"}]
    else:
        assert done.stdout == "it said ? back\n"
    assert model.requests[1]["messages"][-1]["content"] == "half \ud800 a pair"  # the model read it as it came


def test_p_waits_for_every_server_however_slow(tmp_path):
    """-p wants the same tools every run: a server that takes 3 s to start is in its first request."""
    cwd = workdir(tmp_path, {"demo": demo(), "late": fake("named", '["echo"]', env={"INIT_DELAY": "3"})})
    with FakeOpenAI([answer("done")]) as model:
        done = run_p(cwd, ["-p", "hi"], agent_env(model.base_url))
    assert done.returncode == 0, done.stderr
    assert "mcp_late_echo" in {t["function"]["name"] for t in model.requests[0]["tools"]}


@pytest.mark.parametrize("sent, status, said", [(signal.SIGINT, 130, "cancelled (Ctrl-C)"),
                                                (signal.SIGTERM, 143, "stopped by SIGTERM")])
def test_ctrl_c_or_a_signal_cancels_the_calls_and_json_still_says_what_ran(tmp_path, start_agent, sent, status, said):
    """Ctrl-C (or SIGTERM, as `timeout` sends) while two allowed calls of one reply hang: the server hears both
    cancelled, and --json still prints its object, the calls cancelled and why the run ended."""
    log = tmp_path / "methods.log"
    cwd = workdir(tmp_path / "work", {"fake": fake("named", '["hang"]', env={"METHODS_LOG": str(log)})},
                  {"mcp_fake_hang": "allow"})

    def methods(name: str) -> int:
        return log.read_text().split().count(name) if log.exists() else 0
    with FakeOpenAI([tool_calls(("mcp_fake_hang", {}), ("mcp_fake_hang", {})), answer("never")]) as model:
        agent = start_agent(cwd, agent_env(model.base_url), ("--json", "-p", "wait"))
        assert wait_until(lambda: methods("tools/call") == 2, 30), agent.stderr.read() if agent.poll() else ""
        agent.send_signal(sent)
        out, err = agent.communicate(timeout=30)
    assert agent.returncode == status, err
    result = json.loads(out)
    assert result["error"] == said and result["answer"] is None
    assert [call["outcome"] for call in result["tool_calls"]] == ["cancelled", "cancelled"]
    assert methods("notifications/cancelled") == 2
