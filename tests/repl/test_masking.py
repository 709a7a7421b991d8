"""A secret of the user's environment never shows, glued to other letters too (12 characters or more):
not in a permission prompt, not in a tool result the model reads, not in the model's answer, streamed to
the terminal in pieces that split it, or printed by -p, as text or as JSON."""
import json
import subprocess
import sys

import pytest

from conftest import AGENT, agent_env, assert_no_process_left, fake, run_agent, workdir
from fakes.openai_server import FakeOpenAI, answer, tool_calls

SECRET = "ghp_0123456789abcdefXYZ"  # the agent's GH_TOKEN; the fake model streams 3 characters a piece
GLUED = f"yyyy{SECRET}zz"
MASKED = "yyyy[REDACTED:GH_TOKEN]zz"


def script() -> list:
    return [tool_calls(("mcp_fake_echo", {"text": GLUED})), answer(f"the key is {GLUED}.")]


def test_in_the_prompt_the_result_and_the_streamed_answer(tmp_path):
    cwd = workdir(tmp_path, {"fake": fake("normal")})
    with FakeOpenAI(script()) as model:
        done = run_agent(cwd, ["show me", "y", "/exit"], {**agent_env(model.base_url), "GH_TOKEN": SECRET})
    assert SECRET not in done.stdout + done.stderr
    assert f'with {{"text": "{MASKED}"}}' in done.stdout  # the prompt
    assert model.requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": MASKED}
    assert f"the key is {MASKED}." in done.stdout  # the answer, streamed in pieces that split the key


@pytest.mark.parametrize("as_json", [False, True])
def test_in_what_p_prints(tmp_path, as_json):
    cwd = workdir(tmp_path, {"fake": fake("normal")}, {"mcp_fake_echo": "allow"})
    with FakeOpenAI(script()) as model:
        done = subprocess.run([sys.executable, AGENT, "-p", "show me", *["--json"] * as_json], cwd=cwd,
                              capture_output=True, text=True, timeout=30,
                              env={**agent_env(model.base_url), "GH_TOKEN": SECRET})
    assert_no_process_left(cwd)
    assert done.returncode == 0 and SECRET not in done.stdout + done.stderr, done
    answer_text = json.loads(done.stdout)["answer"] if as_json else done.stdout
    assert f"the key is {MASKED}." in answer_text
