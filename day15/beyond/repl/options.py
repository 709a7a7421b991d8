"""Beyond the tutorial: the command line of beyond_agent.py: its flags, -p and --json, --help and --version.

index.ts takes no options. Here a misspelt flag is an error (it must not run another client than the
one asked for), and -p PROMPT (or -p -, from stdin) runs one prompt unattended (unattended.py).
"""
import os
import sys
from dataclasses import dataclass

from beyond.text import clean

VERSION = "GeekAgent Day 15 (Python) 0.2.0"
USAGE = """usage: python3 day15/beyond_agent.py [-p PROMPT [--json]] [--trust] [--sandbox] [--verbose]
                                      [--no-browser] [--help] [--version]
  -p PROMPT     run this prompt to its end without a terminal and print the answer (-p - reads it from stdin);
                only tools GeekAgent.json (or your `a` in the REPL) allows run; exit 0 answered, 1 failed, 2 usage
  --json        with -p: print {"answer", "tool_calls", "usage"} (and "error") as one JSON object
  --trust       trust this folder's .geekagent/mcp.json and .env for this run (also GEEKAGENT_TRUST=1)
  --sandbox     confine every stdio server with Landlock, as if each entry said "sandbox": true (Linux)
  --verbose     print what servers write on stderr as it comes (/logs shows it anyway)
  --no-browser  /mcp login shows the URL to open elsewhere, even where a browser is (GEEKAGENT_NO_BROWSER=1)
  --help        this text
  --version     the agent's name and version
       python3 day15/beyond_agent.py mcp list|get|add|remove|enable|disable|validate|import ...
                manage the servers without a session (`mcp --help` says how)"""
FLAGS = ("--trust", "--sandbox", "--verbose", "--no-browser", "--help", "--version")
# A prompt from stdin is read up to this many characters (more is a usage error, not a cut prompt).
MAX_PROMPT_CHARS = 1_000_000


class UsageError(ValueError):
    """The command line cannot be run as given; the message says what to change."""


@dataclass
class Options:
    """What the command line asks for."""
    prompt: str | None = None  # -p: run it unattended
    as_json: bool = False
    trust: bool = False        # --trust, or GEEKAGENT_TRUST=1
    sandbox: bool = False      # --sandbox: every stdio server confined (wire/sandbox.py) unless its entry says no
    verbose: bool = False
    browser: bool = True       # not --no-browser, nor GEEKAGENT_NO_BROWSER=1
    help: bool = False
    version: bool = False


def parse(args: list[str], stdin=None) -> Options:
    """The options of a command line; UsageError when it cannot be run as given."""
    found, rest = Options(), []
    items = iter(args)
    for arg in items:
        if arg in ("-p", "--print"):
            if found.prompt is not None:
                raise UsageError(f"{arg} is given twice; one run takes one prompt")
            found.prompt = next(items, None)
            if found.prompt is None:
                raise UsageError(f"{arg} needs the prompt (or - to read it from stdin)")
            if found.prompt == "-":
                found.prompt = (stdin or sys.stdin).read(MAX_PROMPT_CHARS + 1)
                if len(found.prompt) > MAX_PROMPT_CHARS:
                    raise UsageError(f"the prompt on stdin is over {MAX_PROMPT_CHARS:,} characters")
        elif arg == "--json":
            found.as_json = True
        else:
            rest.append(arg)
    unknown = [arg for arg in rest if arg not in FLAGS]
    if unknown:
        raise UsageError(f"unknown option {clean(unknown[0], one_line=True)}")
    found.verbose, found.help, found.version, found.sandbox = (flag in rest for flag in (
        "--verbose", "--help", "--version", "--sandbox"))
    found.trust = "--trust" in rest or os.environ.get("GEEKAGENT_TRUST") == "1"
    found.browser = "--no-browser" not in rest and os.environ.get("GEEKAGENT_NO_BROWSER") != "1"
    if found.help or found.version:
        return found
    if found.as_json and found.prompt is None:
        raise UsageError("--json goes with -p")
    if found.prompt is not None and not found.prompt.strip():
        raise UsageError("the prompt is empty")
    return found
