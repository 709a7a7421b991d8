"""`make demo`: the tutorial's section 4.1 conversation, in your terminal, without an API key.

Starts the scripted model of the tests (openai_server.py) on 127.0.0.1 and runs day15/index.py, the
lesson, against it (`make demo ARGS=--agent`: day15/beyond_agent.py, the full agent, with any other
arguments given). Whatever you
type, the model rolls the die and counts the words of the phrase you quote (or of your whole
message), asking through the MCP tools like a real model would; then it sums up the results. The agent
runs in this repository (its .geekagent/), or in DEMO_FOLDER when that is set (the tests' own folder).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

from openai_server import FakeOpenAI, answer, tool_calls

ROOT = Path(__file__).resolve().parents[2]
# Turns the demo can take; each is two requests. Plenty for a demo, and the server stays bounded.
DEMO_TURNS = 100


def phrase(text: str) -> str:
    """The quoted part of a message ('...', "...", «...» or 「...」), or the whole message."""
    quoted = re.search(r"'([^']+)'|\"([^\"]+)\"|「([^」]+)」|«([^»]+)»", text)
    return next(g for g in quoted.groups() if g) if quoted else text


def demo_reply(request: dict) -> dict:
    """Call dice and word_count after a user message; sum up the results after the tools answered."""
    messages = request["messages"]
    asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    offered = {t["function"]["name"] for t in request.get("tools", [])}
    if not {"mcp_demo_dice", "mcp_demo_word_count"} <= offered:
        return answer("The demo server is not connected, so I have no dice to roll (see /mcp).")
    if messages[-1]["role"] == "user":
        return tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": phrase(asked)}))
    dice, count = [m["content"] for m in messages[-2:]]
    return answer(f"The die says: {dice}. \"{phrase(asked)}\": {count}.")


def main() -> int:
    with FakeOpenAI([demo_reply] * (2 * DEMO_TURNS)) as model:
        env = {**os.environ, "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "demo-key-not-secret",
               "OPENAI_MODEL": "scripted-demo-model"}
        full = "--agent" in sys.argv[1:]
        command = [str(ROOT / "day15" / "beyond_agent.py"), *(arg for arg in sys.argv[1:] if arg != "--agent")] \
            if full else [str(ROOT / "day15" / "index.py")]
        agent = subprocess.Popen([sys.executable, *command], cwd=os.environ.get("DEMO_FOLDER") or ROOT, env=env)
        while True:
            try:
                return agent.wait()
            except KeyboardInterrupt:
                continue  # Ctrl-C belongs to the agent, which got it too


if __name__ == "__main__":
    sys.exit(main())
