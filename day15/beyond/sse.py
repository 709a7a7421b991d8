"""Server-Sent Events read as they arrive.

A model streams its reply as events (model/client.py, as chat.ts does); a remote MCP server may answer a
request with a stream of them (wire/stream.py). events() is the one reader for both, with a size
limit per event; model/reply.py turns a model's chunks into one assistant message.
"""
import re
from collections.abc import Callable, Iterator

from beyond.net import TooBig


def events(response, limit: int, on_id: Callable[[str], None] = lambda event_id: None,
           on_retry: Callable[[int], None] = lambda ms: None) -> Iterator[str]:
    """The data of each event as it completes (events without data, such as keep-alives, are skipped);
    TooBig once one event passes `limit` bytes. An event's id goes to on_id when the event completes,
    data or not (a priming event brings only an id, to resume from); a retry field (milliseconds
    before reconnecting) to on_retry."""
    data: list[str] = []
    size, event_id = 0, None
    for raw in _lines(response, limit):
        size = 0 if not raw else size + len(raw)
        if size > limit:
            raise TooBig(f"an event of the stream is over the {limit >> 20} MB limit and was refused")
        line = raw.decode("utf-8", "replace")
        if line:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "id":
                event_id = value
            elif field == "retry" and value.isdigit():
                on_retry(int(value))
            continue  # event names and comments need nothing from us
        if event_id is not None:
            on_id(event_id)
            event_id = None
        if "".join(data).strip():  # an event without data (a priming event, a keep-alive) is skipped
            yield "\n".join(data)
        data = []
    if "".join(data).strip():
        yield "\n".join(data)  # a stream that ends without the blank line after its last event


# The SSE format ends a line with CRLF, LF or CR alone.
LINE_END = re.compile(rb"\r\n|\r|\n")
BOM = b"\xef\xbb\xbf"


def _lines(response, limit: int) -> Iterator[bytes]:
    """The stream's lines without their ends, as the bytes arrive (a leading byte order mark dropped);
    TooBig once a line passes `limit` bytes without ending. A line's pieces are joined once, when it ends."""
    parts, size, after_cr, head = [], 0, False, b""
    while chunk := response.read1(65536):
        if head is not None:  # the stream's first bytes: wait for enough of them to tell a BOM
            head += chunk
            if len(head) < len(BOM) and BOM.startswith(head):
                continue
            chunk, head = head.removeprefix(BOM), None
        if after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]  # the LF of a CRLF cut between two reads
        after_cr, start = chunk[-1:] == b"\r", 0
        for end in LINE_END.finditer(chunk):
            parts.append(chunk[start:end.start()])
            yield b"".join(parts)
            parts, size, start = [], 0, end.end()
        if start < len(chunk):
            parts.append(chunk[start:])
            size += len(chunk) - start
            if size > limit:
                raise TooBig(f"an event of the stream is over the {limit >> 20} MB limit and was refused")
    if parts:
        yield b"".join(parts)
