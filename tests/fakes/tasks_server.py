"""A 2026-07-28 MCP server with the tasks extension (io.modelcontextprotocol/tasks), written from the
extension's text, for tests: over stdio (run as a program) or Streamable HTTP (TasksHttp, in the test).

Its tools (a task is created only when the call declares the extension, as the text requires; a tool
whose task support is "required" answers -32021 otherwise):
  slow      a task that works for `seconds` (0.3), asking to be polled every `interval` ms (100;
            `intervals` gives one per poll), saying how far it is; completes with "slow done"
  form      a task that asks for a name (elicitation, key "name"), repeats the question in the poll
            after the answer came (as an eventually consistent server may), then completes "hello <name>"
  sample    a task that asks the model (sampling, key "llm"), then completes with what it said
  fail      a task that fails with a JSON-RPC error; gone: cancelled by the server
  forever   a task that works until tasks/cancel (then cancelled)
  optional  task support "optional": a plain result, unless {"task": true}
Modes (argv[1] or TasksHttp(mode)): "task_list" answers tools/list with a task; "new_task" answers
tasks/get with a new task; "garbage" answers tasks/get with something that is no task.
Every request is written, with its time, to the JSON-lines file $TASKS_LOG (stdio) or kept in
TasksHttp.seen (with the HTTP headers).
"""
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODERN = "2026-07-28"
META = "io.modelcontextprotocol/"
TASKS = f"{META}tasks"
NAMED_BY = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
SCHEMA = {"type": "object", "properties": {"seconds": {"type": "number"}, "interval": {"type": "integer"},
                                           "task": {"type": "boolean"}}}
TOOLS = [{"name": name, "description": f"the {name} task", "inputSchema": SCHEMA,
          "execution": {"taskSupport": "optional" if name == "optional" else "required"}}
         for name in ("slow", "form", "sample", "fail", "gone", "forever", "optional")]
NAME_FORM = {"mode": "form", "message": "Your name, for the greeting?",
             "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
LLM = {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 20}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Tasks:
    """The server's side: the tasks, and an answer for each request."""

    def __init__(self, mode: str = "") -> None:
        self.mode, self.tasks, self.lock = mode, {}, threading.Lock()

    def answer(self, message: dict) -> dict | None:
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            return None
        meta = params.get("_meta") or {}
        if meta.get(f"{META}protocolVersion") != MODERN:
            return self.error(message, -32022, "Unsupported protocol version", {"supported": [MODERN]})
        declared = TASKS in ((meta.get(f"{META}clientCapabilities") or {}).get("extensions") or {})
        if method == "server/discover":
            return self.result(message, {"supportedVersions": [MODERN], "capabilities": {
                "tools": {}, "extensions": {TASKS: {}}}, "serverInfo": {"name": "fake-tasks", "version": "1"}})
        if method == "tools/list" and self.mode == "task_list":
            return self.result(message, self.create("slow", {}), "task")
        if method == "tools/list":
            return self.result(message, {"tools": TOOLS})
        if method.startswith("tasks/") and not declared:
            return self.error(message, -32021, "Missing required client capability",
                              {"requiredCapabilities": {"extensions": {TASKS: {}}}})
        if method == "tools/call":
            return self.call(message, params, declared)
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            with self.lock:
                task = self.tasks.get(params.get("taskId"))
                if task is None:
                    return self.error(message, -32602, "Failed to retrieve task: Task not found")
                return getattr(self, method[6:])(message, task, params)
        return self.error(message, -32601, f"Method not found: {method}")

    def call(self, message: dict, params: dict, declared: bool) -> dict:
        tool, args = params.get("name"), params.get("arguments") or {}
        if tool == "optional" and not args.get("task"):
            return self.result(message, {"content": [{"type": "text", "text": "optional, no task"}]})
        if not declared:
            return self.error(message, -32021, f"{tool} requires the tasks extension",
                              {"requiredCapabilities": {"extensions": {TASKS: {}}}})
        with self.lock:
            return self.result(message, self.create(tool, args), "task")

    def create(self, tool: str, args: dict) -> dict:
        task_id = str(uuid.uuid4())
        intervals = args.get("intervals") or [args.get("interval", 100)]
        self.tasks[task_id] = {"tool": tool, "args": args, "began": time.monotonic(), "polls": 0,
                               "intervals": intervals, "answers": {}, "cancelled": False, "answered_at": None}
        return self.view(task_id, {"status": "working", "statusMessage": "started"})

    def view(self, task_id: str, fields: dict) -> dict:
        task = self.tasks[task_id]
        interval = task["intervals"][min(task["polls"], len(task["intervals"]) - 1)]
        return {"taskId": task_id, "createdAt": now(), "lastUpdatedAt": now(), "ttlMs": 600000,
                "pollIntervalMs": interval, **fields}

    def get(self, message: dict, task: dict, params: dict) -> dict:
        task["polls"] += 1
        if self.mode == "new_task":
            return self.result(message, self.create("slow", {}), "task")
        if self.mode == "garbage":
            return self.result(message, {"hello": "world"})
        return self.result(message, self.view(params["taskId"], self.state(task)))

    def state(self, task: dict) -> dict:
        """What a task is now, by its tool and what happened to it."""
        tool, args, elapsed = task["tool"], task["args"], time.monotonic() - task["began"]
        if task["cancelled"]:
            return {"status": "cancelled", "statusMessage": "cancelled on request"}
        if tool == "fail":
            return {"status": "failed", "statusMessage": "it broke",
                    "error": {"code": -32603, "message": "API rate limit exceeded"}}
        if tool == "gone":
            return {"status": "cancelled", "statusMessage": "the operator stopped it"}
        if tool in ("form", "sample"):
            key = "name" if tool == "form" else "llm"
            request = {"method": "elicitation/create", "params": NAME_FORM} if tool == "form" else \
                {"method": "sampling/createMessage", "params": LLM}
            if key not in task["answers"] or task["polls"] <= task["answered_at"] + 1:  # repeated once after
                return {"status": "input_required", "statusMessage": "waiting for you",
                        "inputRequests": {key: request}}
            answer = task["answers"][key]
            text = f"hello {(answer.get('content') or {}).get('name')}" if tool == "form" else \
                f"the model said {json.dumps(answer.get('content'))}"
            return {"status": "completed", "result": {"content": [{"type": "text", "text": text}], "isError": False}}
        seconds = args.get("seconds", 0.3)
        if tool == "forever" or elapsed < seconds:
            return {"status": "working", "statusMessage": f"{min(99, int(100 * elapsed / seconds))}% done"}
        return {"status": "completed", "result": {"content": [{"type": "text", "text": f"{tool} done"}],
                                                  "isError": False}}

    def update(self, message: dict, task: dict, params: dict) -> dict:
        for key, answer in (params.get("inputResponses") or {}).items():
            task["answers"].setdefault(key, answer)
            task["answered_at"] = task["polls"]
        return self.result(message, {})

    def cancel(self, message: dict, task: dict, params: dict) -> dict:
        task["cancelled"] = True
        return self.result(message, {})

    @staticmethod
    def result(message: dict, result: dict, kind: str = "complete") -> dict:
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": kind, **result}}

    @staticmethod
    def error(message: dict, code: int, text: str, data: object = None) -> dict:
        return {"jsonrpc": "2.0", "id": message.get("id"),
                "error": {"code": code, "message": text, **({} if data is None else {"data": data})}}


class TasksHttp:
    """The same server over Streamable HTTP on 127.0.0.1, for `with`: url; seen, each request with its
    time and headers."""

    def __init__(self, mode: str = "") -> None:
        self.tasks, self.seen = Tasks(mode), []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.seen.append({"at": time.monotonic(), "headers": headers, **message})
                named = (message.get("params") or {}).get(NAMED_BY.get(message.get("method"), ""))
                if "method" in message and "id" in message and (headers.get("mcp-method") != message["method"]
                                                                 or headers.get("mcp-name") != named):
                    return self.send(400, Tasks.error(message, -32020, "Header mismatch"))
                reply = outer.tasks.answer(message)
                self.send(200, reply) if reply else self.send(202, None)

            def do_GET(self) -> None:
                self.send(405, None)

            def send(self, status: int, body: dict | None) -> None:
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def __enter__(self) -> "TasksHttp":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    lifetime = threading.Timer(120, lambda: os._exit(9))  # never outlives a test
    lifetime.daemon = True
    lifetime.start()
    tasks, log = Tasks(sys.argv[1] if len(sys.argv) > 1 else ""), os.environ.get("TASKS_LOG")
    for line in sys.stdin:
        message = json.loads(line)
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"at": time.monotonic(), **message}) + "\n")
        reply = tasks.answer(message)
        if reply:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
