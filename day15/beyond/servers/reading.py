"""Beyond the tutorial: the full agent's built-in `read`, by pages. The lesson's reads the start of a file;
this one reads a page from a line: at most READ_PAGE_LINES lines and READ_PAGE_BYTES bytes (a file may be
one huge line), so one call floods neither the model's context nor the agent's memory; only a regular file
(a FIFO would block forever, a device never end); an offset past the end answered at once. agent.py puts
it in the lesson's read's place (toolset.replace_builtin), asking as folder/secret_files.py says.
"""
import os
import stat

import tools
from tools import Tool

READ_PAGE_LINES = 200
READ_PAGE_BYTES = 64 * 1024
DESCRIPTION = f"Read a text file inside the project, {READ_PAGE_LINES} lines per page."
SCHEMA = {"type": "object", "properties": {
    "path": {"type": "string", "description": "relative to the project root"},
    "offset": {"type": "integer", "description": "first line, from 0"}}}


def read_tool(root: str = ".") -> Tool:
    """`read` confined to root (the working directory), as the lesson's is."""
    base = os.path.realpath(root)
    return Tool("read", DESCRIPTION, SCHEMA, lambda args: read_page(base, args.get("path", ""), args.get("offset", 0)))


def read_page(base: str, path: str, offset: object) -> str:
    """One page from line `offset`: at most READ_PAGE_LINES lines and READ_PAGE_BYTES bytes."""
    target, start = tools.inside(base, path), max(int(offset), 0)
    info = os.stat(target)
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path!r} is not a regular file")
    if start > info.st_size:  # a line takes a byte at least: answered at once, however big the offset
        return f"(offset {start} is past the end of {path!r}, which has {info.st_size:,} bytes)"
    with open(target, "rb") as f:
        for skipped in range(start):  # skip whole lines in bounded steps, however long they are
            if not _skip_line(f):
                return f"(offset {start} is past the end of {path!r}, which has {skipped} lines)"
        page, lines = b"", 0
        while lines < READ_PAGE_LINES and len(page) < READ_PAGE_BYTES:
            line = f.readline(READ_PAGE_BYTES - len(page))
            if not line:
                break
            page += line
            lines += line.endswith(b"\n")
        more = f.read(1) != b""
    text = page.decode("utf-8", "replace").removesuffix("\n")
    if more and lines:
        text += f"\n... more follows; call read with offset {start + lines}"
    elif more:
        text += f"\n... line {start} is longer than {READ_PAGE_BYTES:,} bytes; this is its start"
    return text


def _skip_line(f) -> bool:
    """Read past one line, in pieces of at most a page; False at the end of the file."""
    part = f.readline(READ_PAGE_BYTES)
    if not part:
        return False
    while not part.endswith(b"\n") and (part := f.readline(READ_PAGE_BYTES)):
        pass
    return True
