"""Beyond the tutorial: what a server answers, as text: content of every kind, resources, prompts, pages.

The tutorial keeps only the text parts of a tool result and reads the first page of a list. Here
every kind of content is described (images, audio, resources, links), a line from a stdio server
is parsed as JSON reads it, a call's result is checked (its content, isError, its structured
content against the tool's outputSchema), and a list follows nextCursor within bounds.
"""
import json

from beyond.client.errors import ReplyError, ServerError
from beyond.client.schema import mismatch
from beyond.text import shorten
from mcp import McpError

# A list request follows nextCursor, at most this many pages (a loop guard against a cycling server),
# and at most this much JSON over all pages: thousands of tools, far more than a model is offered.
# Held as Python objects, JSON of small objects takes several times its size: 8 MB of pages cost
# the agent about 40 MB (`make bench` measures it).
MAX_TOOL_PAGES = 100
MAX_LISTED_BYTES = 8 << 20
# JSON-RPC's "method not found": a server that answers a list request so has none of them.
METHOD_NOT_FOUND = -32601


def gathered(request, method: str, key: str, server: str) -> list[dict]:
    """A list request through request(method, params), following nextCursor (at most MAX_TOOL_PAGES
    pages and MAX_LISTED_BYTES); "method not found" is none."""
    found, params, size = [], {}, 0
    for _ in range(MAX_TOOL_PAGES):
        try:
            result = request(method, params)
        except McpError as e:
            if isinstance(e, ReplyError) and e.code == METHOD_NOT_FOUND:
                return found
            raise
        items = result.get(key, [])
        if not isinstance(items, list):
            raise ServerError(f"{method} answered \"{key}\" that is not a list: {shorten(json.dumps(items))}", server)
        found += [item for item in items if isinstance(item, dict)]
        size += len(json.dumps(items)) if items else 0  # about what the pages took on the wire
        if size > MAX_LISTED_BYTES:
            raise ServerError(f"{method} answered over {MAX_LISTED_BYTES >> 20} MB in its pages; refused", server)
        cursor = result.get("nextCursor")
        if not cursor:
            return found
        params = {"cursor": cursor}
    raise ServerError(f"{method} still had more pages after {MAX_TOOL_PAGES}", server)


def call_text(result: dict, output_schema: dict | None, server: str) -> str:
    """The text of a tools/call result, or McpError: a content that is not a list, isError true (only
    true: "false" or 1 is no error flag), structured content that does not match the outputSchema."""
    if not isinstance(result.get("content", []), list):
        raise ServerError("tools/call answered \"content\" that is not a list", server)
    text = content_text(result)
    if result.get("isError") is True:
        raise ServerError(text, server)
    problem = mismatch(result["structuredContent"], output_schema) if (
        isinstance(output_schema, dict) and "structuredContent" in result) else None
    if problem:
        raise ServerError(f"its structuredContent does not match the tool's outputSchema: {problem}", server)
    return text


def parse_message(line: bytes) -> tuple[dict | None, str | None]:
    """One line of a stdio server as a JSON-RPC message, and what to report about it: invalid UTF-8
    is replaced (and said), a line that is no JSON object is skipped (and said)."""
    complaint = None
    try:
        text = line.decode()  # decoded first: json.loads would guess the encoding of bytes
    except UnicodeDecodeError:
        text, complaint = line.decode("utf-8", "replace"), "replaced invalid UTF-8 in a message from the server"
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
        message = None
    if not isinstance(message, dict):
        return None, f"skipped a line that is not a JSON-RPC message: {shorten(text)}"
    return message, complaint


def resource_text(result: dict) -> str:
    """A resources/read result: text as it is, anything else described."""
    contents = result.get("contents") if isinstance(result.get("contents"), list) else []
    return content_text({"content": [{"type": "resource", "resource": c} for c in contents]})


def prompt_messages(result: dict) -> list[dict]:
    """A prompts/get result: its messages, each {"role", "text"}."""
    messages = result.get("messages") if isinstance(result.get("messages"), list) else []
    return [{"role": m.get("role") if m.get("role") in ("user", "assistant") else "user",
             "text": content_text({"content": [m.get("content")]})} for m in messages if isinstance(m, dict)]


def content_text(result: dict) -> str:
    """The text of a tools/call result; other content is described; empty gets a placeholder."""
    parts = []
    for item in result.get("content") or ():
        if isinstance(item, dict):  # text, by far the most common, without a call
            part = str(item.get("text", "")) if item.get("type") == "text" else _content_part(item)
            if part:
                parts.append(part)
    text = "\n".join(parts)
    if not text and result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"], ensure_ascii=False)  # a result with only structured content
    return text or "(no content)"


def _content_part(item: dict) -> str:
    """One content item as text: text itself; images, audio, binary resources and links described."""
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {_binary(item, 'data')}]"
    if kind == "resource":
        resource = item.get("resource") if isinstance(item.get("resource"), dict) else {}
        if "text" in resource:
            return str(resource["text"])
        blob = f", {_binary(resource, 'blob')}" if "blob" in resource else ""
        return f"[resource: {resource.get('uri', '?')}{blob}]"
    if kind == "resource_link":
        return f"[link: {item.get('uri', '?')}]"
    return f"[{kind} content]"


def _binary(item: dict, key: str) -> str:
    """Base64 content as its type and size: 4 characters hold 3 bytes."""
    return f"{item.get('mimeType', 'unknown type')}, {len(str(item.get(key, '')).rstrip('=')) * 3 // 4} bytes"
