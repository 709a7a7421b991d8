"""Beyond the tutorial: a streamed Chat Completion assembled from its chunks, and the history kept as the
API wants it back (every reply stored normalised, a failed turn closed).
"""
import json


class StreamedReply:
    """The chunks of a streamed Chat Completion, assembled into one assistant message.

    Real endpoints differ: a tool-call delta may lack its index (its place in the list then),
    repeat its id on every chunk (the same call), or bring a new id at an index in use (a new call);
    finish_reason may be missing or wrong (the calls assembled decide); a chunk may have no
    choices (the usage chunk, for one). Arguments are joined as they come and parsed by the caller.
    """

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[dict] = []   # {"id", "name", "arguments": [fragments]}
        self._by_index: dict[int, dict] = {}
        self.usage: dict | None = None

    def add(self, chunk: dict) -> str:
        """Take one chunk; returns the text it adds (to show at once)."""
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        delta = choices[0].get("delta") if isinstance(choices[0].get("delta"), dict) else {}
        deltas = delta.get("tool_calls") if isinstance(delta.get("tool_calls"), list) else []
        for position, call in enumerate(deltas):
            if isinstance(call, dict):
                self._merge(call, position)
        text = delta.get("content")
        if isinstance(text, str) and text:
            self.text.append(text)
            return text
        return ""

    def _merge(self, delta: dict, position: int) -> None:
        key = delta["index"] if type(delta.get("index")) is int else position
        call_id = delta.get("id") if isinstance(delta.get("id"), str) else ""
        call = self._by_index.get(key)
        if call is None or (call_id and call["id"] and call_id != call["id"]):  # a new call
            call = self._by_index[key] = {"id": call_id, "name": "", "arguments": []}
            self.calls.append(call)
        call["id"] = call["id"] or call_id
        function = delta.get("function") if isinstance(delta.get("function"), dict) else {}
        if isinstance(function.get("name"), str) and not call["name"]:
            call["name"] = function["name"]  # from the first delta that names it; repeats are ignored
        if isinstance(function.get("arguments"), str):
            call["arguments"].append(function["arguments"])

    def message(self, with_calls: bool = True) -> dict:
        """The assistant message so far (with_calls=False: its text alone, for a stream cut short)."""
        calls = [{"id": c["id"], "type": "function",
                  "function": {"name": c["name"], "arguments": "".join(c["arguments"])}}
                 for c in self.calls] if with_calls else []
        return {"role": "assistant", "content": "".join(self.text) or None,
                **({"tool_calls": calls} if calls else {})}


# Beyond the tutorial: what the model sent is stored as the API wants it back, whatever it sent.
def stored(message: dict, turn: int) -> dict:
    """The assistant message as it is stored and replayed: its text (None only beside calls), and
    tool calls whose arguments are a JSON string and whose ids are present and unique."""
    content = text_of(message.get("content"))
    stored = {"role": "assistant", "content": content or None}
    calls = message.get("tool_calls")
    calls = [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    seen: set[str] = set()
    for i, call in enumerate(calls):
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id or call_id in seen:
            call_id = f"call_{turn}_{i}"
        seen.add(call_id)
        calls[i] = {"id": call_id, "type": "function",
                    "function": {"name": str(function.get("name", "")), "arguments": arguments}}
    if calls:
        stored["tool_calls"] = calls
    else:
        stored["content"] = content  # text, never null, when there is no call
    return stored


# Beyond the tutorial: some endpoints send content as a list of parts.
def text_of(content: object) -> str:
    """A message's text: a string as it is; a list of parts (as some endpoints send) joined; else none."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


# Beyond the tutorial: a failed turn is closed, not dropped, so the next request is still valid.
def closed(history: list[dict], reason: str) -> str:
    """Answer every unanswered tool call of the last assistant message, then end the turn with a note."""
    last = next((i for i in range(len(history) - 1, -1, -1) if history[i]["role"] == "assistant"), None)
    if last is not None:
        answered = {m.get("tool_call_id") for m in history[last + 1:] if m["role"] == "tool"}
        for call in history[last].get("tool_calls", []):
            if call.get("id") not in answered:
                history.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": f"({reason})"})
    if history[-1]["role"] != "assistant" or history[-1].get("tool_calls"):
        history.append({"role": "assistant", "content": f"({reason})"})
    return f"({reason})"
