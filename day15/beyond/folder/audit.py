"""Beyond the tutorial: every tool call is recorded, one JSON line each, in .geekagent/audit.jsonl.

The MCP specification says clients SHOULD log tool usage for audit; the tutorial records nothing.
tools.run_tool reports each call here (set by agent.py): when, which server and tool, the
arguments (masked, bounded), what was decided, how long it took, how it ended and how much it
returned. Writing never fails a call: a failure is one warning. The file is written without
following links and rotated (folder/project.py). /audit shows the last entries.
"""
import json
import os
import sys
import time

from beyond.folder.project import NOFOLLOW, FolderError, append_inside
from beyond.secrets import mask, mask_data
from beyond.text import clean, shorten

AUDIT_PATH = ".geekagent/audit.jsonl"
# Arguments are recorded up to this many characters: enough to see what ran, not a copy of a payload.
AUDIT_ARGS_CHARS = 2000
# A tool name is recorded up to this many characters (the API's names have 64; a model may send any).
AUDIT_NAME_CHARS = 200
# /audit reads at most this much of the end of the file, however big it has grown.
TAIL_BYTES = 256 * 1024


class AuditLog:
    """Appends one line per tool call; `server_of` names the server of an MCP tool ("" for built-ins),
    `confined(tool)` how its stdio server runs ("sandboxed: ...", "not sandboxed"), None for others."""

    def __init__(self, server_of, path: str = AUDIT_PATH, confined=lambda tool: None) -> None:
        self.server_of, self.path, self.confined = server_of, path, confined
        self._warned = False

    def record(self, name: str, arguments: str, decision: str | None, outcome: str, seconds: float,
               size: int) -> None:
        self.write({"server": self.server_of(name), "tool": shorten(name, AUDIT_NAME_CHARS),
                    "arguments": shorten(mask(arguments or "{}"), AUDIT_ARGS_CHARS),  # masked before it is cut
                    "decision": decision or "none", "duration_ms": round(seconds * 1000),
                    "outcome": outcome, "result_chars": size}
                   | ({"sandbox": self.confined(name)} if self.confined(name) else {}))

    def asked(self, entry: dict) -> None:
        """What a server asked of the user (asks/handlers.py): the kind, server, fields or mode, the action;
        never values."""
        self.write({key: shorten(clean(str(value), one_line=True), AUDIT_NAME_CHARS) if isinstance(value, str)
                    else value for key, value in entry.items()})

    def write(self, entry: dict) -> None:
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **entry}
        try:
            append_inside(self.path, json.dumps(mask_data(entry), ensure_ascii=False) + "\n")
        except (OSError, FolderError) as e:
            if not self._warned:  # once: the REPL stays readable when the folder is read-only
                self._warned = True
                reason = e if isinstance(e, FolderError) else e.strerror or e
                print(f"warning: cannot write the audit log {self.path}: {clean(str(reason), one_line=True)}",
                      file=sys.stderr)

    def last(self, count: int = 20) -> list[str]:
        """The last `count` entries, one readable line each (cleaned: the file is text anyone could edit)."""
        try:
            with open(os.open(self.path, os.O_RDONLY | NOFOLLOW), "rb") as f:  # never through a link
                f.seek(max(0, os.fstat(f.fileno()).st_size - TAIL_BYTES))
                # Only \n ends an entry: json.dumps leaves U+2028 and U+0085 inside strings as they are.
                lines = [line for line in f.read().decode("utf-8", "replace").split("\n") if line][-count:]
        except FileNotFoundError:
            return []
        except OSError as e:  # a link (ELOOP), no permission...
            return [f"(the audit log {self.path} cannot be read: {e.strerror or e})"]
        return [_readable(line) for line in lines]


def _readable(line: str) -> str:
    try:
        e = json.loads(line)
        where = f"{e['server']}/" if e.get("server") else ""
        text = (f"{e['time']}  {where}{e['tool']}  {e['decision']} -> {e['outcome']}, "
                f"{e['duration_ms']} ms, {e['result_chars']} chars  {shorten(e['arguments'], 120)}")
    except (ValueError, KeyError, TypeError):
        text = shorten(line, 200)
    return clean(mask(text), one_line=True)  # a line written before its secret was known
