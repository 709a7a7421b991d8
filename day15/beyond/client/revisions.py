"""Beyond the tutorial: MCP's 2026-07-28 revision, which has no handshake, beside the revisions that do.

The tutorial's client opens with initialize and notifications/initialized, as every revision up to
2025-11-25 does. In 2026-07-28 every request carries its protocol version, the client's
capabilities and identity in params._meta; server/discover says which versions and capabilities a
server has; there are no sessions, and a server sends no requests of its own. A server's
"protocol" in mcp.json picks: "legacy" (the handshake: the default), "2026-07-28" (this revision
only), or "auto" (a server/discover probe, and the handshake when it finds no modern server).

The full client (session.py's Session) holds one Revisions per server: the revision spoken, the
handshake or the probe that agrees on it, and what differs between revisions (the _meta of a
request, the HTTP headers MCP asks for). It asks the client for requests and a new connection, and
sets the client's capabilities.
"""
import json
import threading

from beyond.client.capabilities import AskRefused
from beyond.client.errors import NoReply, Refused, ReplyError, ServerError
from beyond.client.schema import mirrored, param_values
from beyond.client.tasks import declaring, task_allowed
from beyond.text import shorten
from beyond.wire.base import About
from mcp import McpError

# Who we are to servers, in the handshake and (2026-07-28) on every request.
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}

# We offer the newest revision (the tutorial offers 2025-06-18) and accept any revision whose
# messages we understand; anything else is refused.
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# The stateless revisions this client speaks, oldest first (it declares the newest); an entry's
# "protocol" names one of them (config.py: PROTOCOLS).
MODERN_VERSIONS = ("2026-07-28",)
# Keys of params._meta reserved by MCP; protocolVersion and clientCapabilities are required.
META = "io.modelcontextprotocol/"
# JSON-RPC error: the request's protocol version is not one the server speaks (data: supported, requested).
UNSUPPORTED_VERSION = -32022
# 2026-07-28: a call answered "input_required" is sent again with the inputs at most this many times.
MAX_INPUT_ROUNDS = 8
# The requests a server may answer with input_required.
INPUT_METHODS = ("tools/call", "prompts/get", "resources/read")
# How long start-up waits for the acknowledgement of subscriptions/listen (at most startupTimeout).
PROBE_TIMEOUT_S = 5.0
# "auto": a server/discover without an answer this long is followed by the handshake; the first valid
# answer of the two decides (a server that ignores what it does not know is up in seconds).
DISCOVER_WAIT_S = 3.0
# HTTP: the request parameter each method's Mcp-Name header repeats (a task's: its id, for load balancers).
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
            "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


class Revisions:
    """Which revision one server speaks, and requests shaped for it. It is given what it needs of its
    session: request(method, params, timeout=None) and notify(method), the session's, through the
    twin's _request; said(text), the server's log; reconnect(), to start a stdio server again that
    exited on a probe; offered(), the capabilities this client declares."""

    def __init__(self, name: str, config, request, notify, said, reconnect, offered) -> None:
        self.name, self.config = name, config
        self.request, self.notify, self.said, self.reconnect, self.offered = request, notify, said, reconnect, offered
        self.modern = False  # whether `revision` is one without a handshake (read on every request)
        self._revision: str | None = None
        self.plain = About()
        self.listen_id: int | None = None  # the id of our subscriptions/listen request, which no one waits for
        self._late: dict | None = None  # a server/discover answer that came after the probe gave up
        self._late_came = threading.Event()  # set when it came
        self.subscribed: threading.Event | None = None  # set when the server acknowledged it (one per subscription)

    @property
    def revision(self) -> str | None:
        """The version spoken (agreed in the handshake, or modern); None before."""
        return self._revision

    @revision.setter
    def revision(self, version: str | None) -> None:
        self._revision, self.modern = version, version in MODERN_VERSIONS
        self.plain = About(version)  # what every message but initialize says before 2026-07-28, made once

    def open(self) -> dict:
        """Agree on a revision with the server, as the entry's "protocol" says; the capabilities it declared."""
        self.revision, self._late = None, None
        self._late_came = threading.Event()
        if self.config.protocol == "legacy":
            try:
                return self.handshake()
            except McpError as e:
                if not _answered(e):
                    raise  # no answer, an exit, a refused connection: not a question of revisions
                raise ServerError(f"{e} (if the server speaks only MCP 2026-07-28, set \"protocol\": \"auto\" "
                                  "in its entry)", self.name) from None
        auto = self.config.protocol == "auto"
        try:  # "2026-07-28" waits as long as the entry's startupTimeout: a slow server is a live one
            return self._discover(min(DISCOVER_WAIT_S, self.config.startup_timeout) if auto else None)
        except McpError as e:
            if self.config.protocol != "auto":
                if not _answered(e):
                    raise  # a server that is down is not one of another revision
                raise ServerError(f"{e} (for a server that speaks only the handshake, set \"protocol\": "
                                  "\"legacy\" or \"auto\" in its entry)", self.name) from None
            self.said(f"server/discover found no 2026-07-28 server ({e}); using the handshake")
            return self._fall_back(e)

    def handshake(self) -> dict:
        """initialize, check the version, notifications/initialized; the capabilities the server declared."""
        return self._initialized(self._initialize())

    def _initialize(self) -> dict:
        init = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": self.offered(),
                                           "clientInfo": CLIENT_INFO})
        if init.get("protocolVersion") not in SUPPORTED_VERSIONS:
            raise ServerError(f"unsupported protocol version {init.get('protocolVersion')!r} "
                              f"(this client speaks {', '.join(SUPPORTED_VERSIONS)})", self.name)
        return init

    def _initialized(self, init: dict) -> dict:
        self.revision = init["protocolVersion"]
        self.notify("notifications/initialized")
        return init.get("capabilities") if isinstance(init.get("capabilities"), dict) else {}

    def _discover(self, timeout: float | None) -> dict:
        """server/discover in the newest modern revision; the server's versions pick the one we speak."""
        self.revision = MODERN_VERSIONS[-1]  # requests now carry _meta
        return self._adopt(self.request("server/discover", {}, timeout=timeout))

    def late_discovery(self, result: dict) -> None:
        """An answer to server/discover that came after the probe gave up: kept, for _fall_back."""
        self._late = result
        self._late_came.set()

    def _adopt(self, result: dict) -> dict:
        """Speak what a server/discover answer offers (its capabilities), or McpError naming both lists."""
        supported = result.get("supportedVersions")
        common = [v for v in MODERN_VERSIONS if isinstance(supported, list) and v in supported]
        if not common:
            self.revision = None
            raise ServerError(f"server/discover: {self._versions_differ(supported)}", self.name)
        self.revision = common[-1]
        return result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}

    def _fall_back(self, why: McpError) -> dict:
        """The handshake after a failed probe; a stdio server that exited on the probe is started again.
        The probe's answer, if it comes late while the handshake has none yet, or after the handshake
        was refused, is used instead."""
        self.revision = None
        self.reconnect()
        shook: dict = {}
        done = threading.Event()

        def shake() -> None:
            try:
                shook["init"] = self._initialize()
            except McpError as e:
                shook["error"] = e
            finally:
                done.set()
        threading.Thread(target=shake, name=f"mcp-{self.name}-initialize", daemon=True).start()
        while not done.wait(0.05):  # in steps: the probe's late answer, or a Ctrl-C, is seen
            if self._late_came.is_set():
                try:
                    self.revision = MODERN_VERSIONS[-1]
                    return self._adopt(self._late)
                except McpError:
                    self.revision = None
                    done.wait()
                    break
        try:
            if "error" in shook:
                raise shook["error"]
            return self._initialized(shook["init"])
        except McpError as e:
            # Refused by a server that did not answer the probe in time: it may be a modern one whose
            # answer is still on its way; it gets as long again as the probe had.
            if isinstance(why, NoReply) and self._late_came.wait(self.config.startup_timeout):
                self.revision = MODERN_VERSIONS[-1]
                try:
                    return self._adopt(self._late)
                except McpError:
                    self.revision = None
            raise ServerError(f"{e} (and server/discover failed: {why})", self.name) from None

    def subscribe(self, capabilities: dict, open_stream, new_id) -> None:
        """Ask to hear when the tool or resource list changes (subscriptions/listen), as far as the server
        says it tells (listChanged); earlier revisions say so unasked.

        The request stays open for the session: its answer ends the subscription, so no one waits
        for it; open_stream(request) sends it so (over HTTP, the answer is a stream the transport keeps
        reading). Start-up waits (a little) for the server's acknowledgement, so no change made right
        after is missed. new_id() is the session's next request id.
        """
        wanted = {f"{kind}ListChanged": True for kind in ("tools", "resources")
                  if isinstance(capabilities.get(kind), dict) and capabilities[kind].get("listChanged")}
        if not self.modern or not wanted:
            return
        self.listen_id, self.subscribed = new_id(), threading.Event()
        open_stream({"jsonrpc": "2.0", "id": self.listen_id, "method": "subscriptions/listen",
                     "params": self.with_meta({"notifications": wanted})})
        if not self.subscribed.wait(min(PROBE_TIMEOUT_S, self.config.startup_timeout)):
            self.said("subscriptions/listen was not acknowledged in time; list changes may be missed")

    def acknowledged(self) -> bool:
        """The server acknowledged our subscription (2026-07-28); False when none waits for that."""
        if self.subscribed is None:
            return False
        self.subscribed.set()
        return True

    def unsubscribed(self, message: dict) -> None:
        """The answer to our subscriptions/listen: the server ended the subscription."""
        error = message.get("error") if isinstance(message.get("error"), dict) else {}
        self.said("subscriptions/listen ended" f"{': ' + shorten(str(error.get('message')), 200) if error else ''}")

    def with_meta(self, params: dict) -> dict:
        """A modern request's params: its own _meta (a progress token) plus the version, capabilities, identity."""
        if not self.modern:
            return params
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        return {**params, "_meta": {**meta, f"{META}protocolVersion": self.revision, f"{META}clientInfo": CLIENT_INFO,
                                    f"{META}clientCapabilities": declaring(self.offered())}}

    def switch_version(self, method: str, error: ReplyError) -> None:
        """After an error reply: if a 2026-07-28 server refused the version (-32022), speak another that
        both sides do (the caller sends the request again, once); otherwise raise, naming both lists."""
        if error.code != UNSUPPORTED_VERSION or not self.modern:
            raise error
        data = error.data if isinstance(getattr(error, "data", None), dict) else {}
        supported = data.get("supported") if isinstance(data.get("supported"), list) else []
        common = [v for v in MODERN_VERSIONS if v in supported]  # even the one just sent: retried with a new id
        if not common:
            raise ReplyError(f"{method} failed: {self._versions_differ(supported)}", self.name, error.code) from None
        self.revision = common[-1]

    def _versions_differ(self, supported: object) -> str:
        theirs = ", ".join(map(str, supported)) if isinstance(supported, list) and supported else "none named"
        return (f"the server speaks {shorten(theirs, 200)}; this client speaks {', '.join(MODERN_VERSIONS)} "
                "without a handshake")

    def unusable(self, tool: dict, headers: bool) -> str | None:
        """Why a tool cannot be used where the transport carries headers (`headers`): x-mcp-header
        annotations that cannot be followed; None when it can."""
        if not self.modern or not headers:
            return None
        try:
            mirrored(tool.get("inputSchema"))
            return None
        except ValueError as e:
            return str(e)

    def about(self, message: dict, tools: list[dict]) -> About:
        """What MCP asks a transport that has headers to say of a message (wire/http.py writes them): the
        version agreed; in 2026-07-28 the method, what it names, and the arguments a tool's inputSchema
        asks to see ("x-mcp-header"); whether it starts a session (initialize)."""
        method = message.get("method")
        if not self.modern:
            return About(self.revision, new_session=True) if method == "initialize" else self.plain
        if method is None:  # 2026-07-28: an answer or a notification goes as it is
            return About()
        params = message.get("params") or {}
        named = params.get(NAMED_BY.get(method, ""))
        mirrored_params = {}
        if method == "tools/call":
            schema = next((t.get("inputSchema") for t in tools if t.get("name") == named), None)
            mirrored_params = param_values(schema, params.get("arguments"))
        return About(self.revision, routed=True, method=method, name=named if isinstance(named, str) else None,
                     params=mirrored_params, resumable=False)

    def retry_params(self, method: str, params: dict, result: dict, answer) -> dict | None:
        """The params of the retry of an input_required answer: its input requests answered by
        answer(method, params) (as a server's own requests are; AskRefused leaves one out), its
        requestState echoed exactly (none when none came); None when the answer is no such one."""
        if result.get("resultType") != "input_required" or method not in INPUT_METHODS:
            return None
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        requests = result.get("inputRequests")
        if isinstance(requests, dict):
            retry["inputResponses"] = {}
            for key, request in requests.items():
                if isinstance(request, dict):
                    try:
                        retry["inputResponses"][key] = answer(str(request.get("method")), request.get("params"))
                    except AskRefused:
                        pass  # left out: the server may ask again, or go on without it
        if isinstance(result.get("requestState"), str):
            retry["requestState"] = result["requestState"]
        return retry

    def result_kind(self, method: str, result: dict) -> None:
        """A result that is not complete (2026-07-28: the server wants input first) is an error here, but a
        task where one may be (client/tasks.py runs it); a task anywhere else is an invalid answer."""
        kind = result.get("resultType", "complete")  # absent, as from earlier revisions: complete
        if kind == "task":
            return task_allowed(method, self.name)  # an invalid answer but where the extension allows it
        if kind == "input_required":
            raise ServerError(f"{method}: the server asked for input more than {MAX_INPUT_ROUNDS} times, or on a "
                              "request that takes none", self.name)
        if kind != "complete":
            raise ServerError(f"{method}: the server answered with an unknown resultType "
                              f"{shorten(json.dumps(kind), 80)}", self.name)


def _answered(e: McpError) -> bool:
    """Whether the server answered the request with an error (a code, or a 400): a hint about revisions
    can help then; not for no answer, an exit or a refused connection."""
    return (isinstance(e, ReplyError) and e.code is not None) or (isinstance(e, Refused) and e.status == 400)
