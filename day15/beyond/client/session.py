"""Beyond the tutorial: the full MCP client (Session), the twin's McpClient (mcp.py) made ready for real servers.

Lifts the limits tutorial section 6 names and those real servers run into: one transport interface
(wire/: hardened stdio, Streamable HTTP), per-server timeouts and cancellation (requests.py), one
restart after a crash and a new session when an HTTP server forgot ours (link.py), answers to the
server's own requests and its notifications (from_server.py), paginated lists and content other
than text (content.py), version checks and the 2026-07-28 revision, which has no handshake
(revisions.py). Its collaborators come in: the handlers of what a server asks (capabilities.Asks), where
a login meets the user (a Screen of auth/login.py), what to do when its tools change.
"""
import time
from collections.abc import Callable

from beyond.auth.provider import FRESH
from beyond.client.capabilities import Asks
from beyond.client.config import ServerConfig, parse_server_config
from beyond.client.content import call_text, gathered, prompt_messages, resource_text
from beyond.client.errors import Refused, ReplyError, ServerError
from beyond.client.requests import Requests
from beyond.client.skills import SKILL_URI, ServedSkills, is_method_missing
from beyond.client.tasks import NoTasks, Task
from beyond.text import shorten
from beyond.waits import Call
from beyond.wire.sandbox import refused_in, refusal
from mcp import McpError, McpToolInfo

__all__ = ["Session", "Refused", "ReplyError"]

# Progress reported by the server pushes a call's deadline out by its timeout, up to this many timeouts.
PROGRESS_CAP = 10
# Of what a server lists as resources, this many URIs of at most this many characters are kept.
MAX_LISTED = 500
MAX_URI_CHARS = 500


class Session(ServedSkills, Requests):
    """One MCP server over a transport, with the same constructor and public methods as the twin's.

    What the server sends on its own is handled by its FromServer, the revision it speaks by its
    Revisions, its transport kept by its Link; `echo` prints the server's words as they come. The skills it
    serves (skills.py) are listed at start, and none of their files read.
    """

    def __init__(self, name: str, cfg: dict | ServerConfig, on_tools_changed: Callable[["Session"], None] | None = None,
                 echo: bool = False, asks: Asks | None = None, screen=None, transport=None, tasks=None,
                 skill_cache=None) -> None:
        super().__init__(name, cfg if isinstance(cfg, ServerConfig) else parse_server_config(name, cfg), echo, asks,
                         screen, transport, skill_cache=skill_cache)
        self.tasks = tasks or NoTasks()  # where the ids of its tasks are kept until their outcome is delivered
        # The URIs and URI templates of its resources, as last listed: its reader tool and @ completion.
        self.listed: list[str] = []
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self.skills_note: str | None = None  # why its skills are not listed, when they could be

    @property
    def revision(self) -> str | None:
        return self.revisions.revision

    # --- the twin's public methods, overridden -------------------------------------------------

    def start(self, login: bool | str | None = None) -> list[McpToolInfo]:
        """Start the transport, agree on a revision (the handshake, or not) and list the tools; on
        failure, shut it down. With `login`, a remote server that asks for a login gets one (the
        browser, or a URL to open); without, that is LoginNeeded (later starts keep the choice).
        login=FRESH (auth/provider.py) logs in anew without trying the stored tokens first."""
        if login is not None:
            self.login = login
        try:
            self.connect()
            self.capabilities = self.revisions.open()
            self.listen()
            self.tools = self.list_tools()
            self.listed = self.list_uris()
            self._list_skills()
            self.revisions.subscribe(self.capabilities, self.open_stream, self.new_request_id)
            if self.login == FRESH:
                self.login = True  # made: a later connection uses its tokens
            return self.tools
        except McpError as e:
            self._shutdown(str(e))
            refused = refused_in(self.cfg, list(self.from_server.tail))  # what a sandbox kept from it, if any
            if refused:
                raise ServerError(f"{e}{refused}", self.name) from None
            raise

    def _list_skills(self) -> None:
        """Its skills' entries, where it declared the extension (reading none of their files); a listing that
        fails is said, and start-up goes on without them."""
        self.skills, self.skill_problems, self.skills_note = {}, [], None
        if not self.serves_skills():
            if not self.revisions.modern and any(SKILL_URI.fullmatch(uri) for uri in self.listed):
                self.skills_note = ("its resources look like skills, which MCP serves from 2026-07-28 on: set "
                                    "\"protocol\": \"2026-07-28\" or \"auto\" in its entry")
            return
        try:
            self.list_skills()
        except McpError as e:
            self.skills_note = ("it serves skills only at MCP 2026-07-28 (set \"protocol\": \"2026-07-28\" or "
                                "\"auto\" in its entry)" if is_method_missing(e) and not self.revisions.modern
                                else f"listing its skills failed: {e}")
            self.log(self.skills_note)
        for problem in self.skill_problems:
            self.log(problem)

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor; a server that answers "method not found" has no tools."""
        transport = self.link.transport
        headers, usable = bool(transport and transport.carries_headers), []
        for tool in gathered(self.request, "tools/list", "tools", self.name):
            why = self.revisions.unusable(tool, headers)
            if why:
                self.log(f"skipped tool {shorten(str(tool.get('name')), 80)}: {why}")
            else:
                usable.append(tool)
        return usable

    # Resources and prompts: tutorial sections 3.1 and 6 leave them out.
    def list_resources(self) -> list[dict]:
        return gathered(self.request, "resources/list", "resources", self.name)

    def list_resource_templates(self) -> list[dict]:
        return gathered(self.request, "resources/templates/list", "resourceTemplates", self.name)

    def list_uris(self) -> list[str]:
        """The URIs and URI templates of its resources (none without the capability); either list failing
        alone is said and the other kept, as many servers answer one of the two only."""
        if "resources" not in self.capabilities:
            return []
        found = []
        for listing, key in ((self.list_resources, "uri"), (self.list_resource_templates, "uriTemplate")):
            try:
                found += [item.get(key) for item in listing()]
            except McpError as e:
                self.log(f"listing its resources failed: {e}")
        return [uri for uri in found if isinstance(uri, str) and 0 < len(uri) <= MAX_URI_CHARS][:MAX_LISTED]

    def relist(self, stale: set[str]) -> bool:
        """Read the lists announced changed ("tools", "resources") again; True when either is not what it was."""
        before = self.tools, self.listed
        if "resources" in stale:
            self.listed = self.list_uris()  # says itself what it could not list
        try:
            if "tools" in stale:
                self.tools = self.list_tools()
        except McpError as e:
            self.log(f"could not read the changed tool list: {e}")
        return (self.tools, self.listed) != before

    def read_resource(self, uri: str) -> str:
        """resources/read: text as it is, anything else described."""
        return resource_text(self.request("resources/read", {"uri": uri}))

    def list_prompts(self) -> list[dict]:
        return gathered(self.request, "prompts/list", "prompts", self.name)

    def get_prompt(self, name: str, arguments: dict[str, str]) -> list[dict]:
        """prompts/get: the prompt's messages, each {"role", "text"}."""
        return prompt_messages(self.request("prompts/get", {"name": name, "arguments": arguments}))

    def call_tool(self, tool: str, args: dict, on_progress: Callable[[str], None] | None = None,
                  output_schema: dict | None = None) -> str:
        """Call one tool by the server's own name; every kind of content becomes text.

        With on_progress the call asks for progress (a progress token): what the server reports goes
        to on_progress and pushes the call's deadline out (by its timeout, up to PROGRESS_CAP timeouts
        in all); the agent's calls all ask. Structured content that does not match the tool's
        output_schema is an error.
        """
        if self.pending.dead or self.link.restarting:  # started again; a restart under way is waited for
            self.link.restart_if_dead()
        now = time.monotonic()  # as Call.within, written out: this is every call's path
        call = Call(now + self.cfg.timeout, self.cfg.timeout, now + PROGRESS_CAP * self.cfg.timeout, on_progress)
        params = {"name": tool, "arguments": args}
        token = None if on_progress is None else self.from_server.track(call)
        if token is not None:
            params["_meta"] = {"progressToken": token}
        try:
            result = self.request("tools/call", params, call=call)
            if result.get("resultType") == "task":  # 2026-07-28, the tasks extension: polled to its end
                if not self.revisions.modern:  # only a 2026-07-28 session declares the extension
                    raise ServerError("tools/call: the server answered with a task, though this session never told it "
                                      "of the tasks extension (an invalid answer)", self.name)
                result = Task(self, tool, result, on_progress, self.tasks).run()
            return call_text(result, output_schema, self.name)
        except McpError as e:  # what a sandbox refused it, as its error or its lines since say
            hint = refusal(self.cfg, str(e)) or self.from_server.refused_since(now)
            if hint:
                e.args = (f"{e} ({hint})",)  # the same error, of the same kind, saying more
            raise
        finally:
            if token is not None:
                self.from_server.untrack(token)

    def task_status(self, task_id: str) -> dict:
        """tasks/get for a task of an earlier run (/tasks): the task as the server says it is now."""
        return self.request("tasks/get", {"taskId": task_id})

    def login_status(self) -> str | None:
        """A remote server's login (logged in until when, which scopes), or None where there is none."""
        transport = self.link.transport
        return transport.login_status() if transport else None

    def issuer(self) -> str | None:
        """A remote server's authorization server (the issuer of its login), or None where there is none."""
        transport = self.link.transport
        return transport.issuer() if transport else None

    def stop(self) -> None:
        """Stop the server for good (no restart). Idempotent; never raises."""
        self.closed = True
        self._shutdown("server stopped")
