"""Beyond the tutorial: the full agent's door (day15/beyond/). index.py is the lesson, the tutorial's program;
this is the agent made for real servers, models and folders:

  python3 day15/beyond_agent.py [--trust] [--sandbox] [--verbose] [--no-browser] [-p PROMPT [--json]]
  python3 day15/beyond_agent.py mcp list|get|add|remove|enable|disable|validate|import ...

beyond/repl/shell.py is its main; this file only checks that the Python it runs on has what it needs.
"""
import os
import sys

if sys.version_info < (3, 10):
    sys.exit(f"GeekAgent Day 15 needs Python 3.10 or newer; this is {sys.version.split()[0]}.")

NO_POSIX = "error: the full agent needs Linux, macOS or WSL; day15/index.py, the lesson, runs on any Python"


def posix() -> bool:
    """Whether this Python has the calls the full agent needs (its locks, its console, process groups)."""
    try:
        import fcntl  # noqa: F401
        import termios  # noqa: F401
    except ImportError:
        return False
    return all(hasattr(os, call) for call in ("geteuid", "killpg", "set_blocking", "O_NOFOLLOW"))


def main() -> int:
    if not posix():  # never the lesson in its place: it would start a cloned folder's servers unasked
        print(NO_POSIX, file=sys.stderr)
        return 2
    from beyond.repl.shell import main as agent
    return agent(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
