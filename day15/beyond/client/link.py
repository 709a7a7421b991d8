"""Beyond the tutorial: the full client's link to its server: the transport it talks through, and how it is kept.

The tutorial's client spawns its server once; when it exits, every later call fails. Here the link
makes the transport the entry asks for (wire/base.py: Transport, stdio or Streamable HTTP) with an
inbox of its own, and replaces it when the server must be started again: after a crash, by the next
call (once per crash, MAX_RESTARTS in a session), or after a 2026-07-28 probe a stdio server exited
on. A session an HTTP server forgot is initialized again, once for all the threads that found it so.
A transport replaced finds its inbox closed, so what it says late is not taken for its successor's.
"""
import threading

from beyond.client.errors import ServerError
from beyond.wire.base import Transport
from mcp import McpError

# A crashed server is started again once per crash, and at most this many times in a session.
MAX_RESTARTS = 3
# A call that finds a restart under way waits for it as long as its handshake may take, and this much more.
RESTART_WAIT_MARGIN_S = 5.0


class Inbox:
    """Where one transport reports to its client (wire/base.py: Inbox), while it is the current one;
    `screen`: where a login of the transport's meets the user."""

    def __init__(self, client) -> None:
        self.client, self.open, self.screen = client, True, client.screen
        self.deliver = client.accept  # each message straight to the client, until close()

    def close(self) -> None:
        """From now on what this transport says is not taken (it has a successor, or none)."""
        self.open = False
        self.deliver = _ignore

    def ended(self, reason: str) -> None:
        if self.open:
            self.client.end(reason)

    def rejected(self, request_id: int, reason: str) -> None:
        self.client.reject(request_id, reason)

    def log(self, text: str) -> None:
        self.client.log(text)

    def said(self, line: str) -> None:
        self.client.from_server.said(line)


def _ignore(message: bytes | dict) -> bool:
    """A closed inbox's deliver(): a message from a retired transport is nobody's."""
    return False


class Link:
    """The transport of one client (session.py's Session) and its replacements."""

    def __init__(self, client) -> None:
        self.client = client
        self.transport: Transport | None = None
        self._inbox: Inbox | None = None
        # _restart_lock lets one caller restart a dead server while the others wait for it, and
        # guards _restarts and _restart_failed. restarting is set under it from the moment the old
        # server is retired until the new one's handshake is complete: no call goes out meanwhile.
        self._restart_lock = threading.Lock()
        self.restarting = False
        # Set but while a restart runs, by the thread restarter; the other threads' requests wait on it.
        self._restarted = threading.Event()
        self._restarted.set()
        self.restarter: int | None = None
        self._restarts = 0
        self._restart_failed: str | None = None  # why the last restart failed: no other until it runs again
        # _renewing is set while one thread initializes a session the server forgot, so the others
        # wait for that one instead of starting their own; _renew_lock guards it.
        self._renew_lock = threading.Lock()
        self._renewing: threading.Event | None = None

    def connect(self, login: bool = False) -> None:
        """A new transport of the client's kind, with a new inbox; the previous one is retired. With
        `login`, it may log in when the server asks (HTTP)."""
        self.retire()
        client = self.client
        self._inbox = Inbox(client)
        self.transport = client.transport_kind(client.name, client.cfg, self._inbox)
        self.transport.allow_login(login)
        self.transport.start()

    def retire(self) -> None:
        """Close the inbox, then stop the transport (for stdio: the process group). Never raises."""
        if self._inbox is not None:
            self._inbox.close()
        if self.transport is not None:
            self.transport.stop()

    def reconnect_if_dead(self) -> None:
        """A stdio server that exited (on a probe it did not understand) is started again."""
        if self.client.dead_reason:
            self.retire()
            self.client.revive()
            self.client.connect()

    def restart_if_dead(self) -> None:
        """A server that died is started again by the next call to it: once per death, MAX_RESTARTS in all.
        Calls that arrive while it restarts wait until its handshake is complete (bounded)."""
        client = self.client
        if not client.dead_reason and not self.restarting:
            return  # the common case, without taking the lock
        if not self._restart_lock.acquire(timeout=client.cfg.startup_timeout + RESTART_WAIT_MARGIN_S):
            raise ServerError("the server is still being restarted; try again", client.name)
        try:
            reason = client.dead_reason
            if not reason or client.closed or self.transport is None:
                return
            if self._restart_failed:
                raise ServerError(self._restart_failed, client.name)
            if self._restarts >= MAX_RESTARTS:
                raise ServerError(f"{reason}; not restarted: it stopped {MAX_RESTARTS + 1} times", client.name)
            self._restarts += 1
            self._restarted.clear()
            self.restarter, self.restarting = threading.get_ident(), True
            self.retire()  # what is left of the old process group
            client.revive()
            try:
                client.start()
            except McpError as e:
                self._restart_failed = f"{reason}; restarting it failed: {e}"
                raise ServerError(self._restart_failed, client.name) from None
        finally:
            self.restarting, self.restarter = False, None
            self._restarted.set()
            self._restart_lock.release()
        client.log(f"restarted the server (it had stopped: {reason})")
        if client.on_tools_changed:
            client.on_tools_changed(client)

    def wait_if_restarting(self) -> None:
        """A request made while another thread restarts the server waits for the new handshake to complete
        (bounded); the restarting thread's own requests, the handshake's, go at once."""
        if self.restarting_elsewhere():
            if not self._restarted.wait(self.client.cfg.startup_timeout + RESTART_WAIT_MARGIN_S):
                raise ServerError("the server is still being restarted; try again", self.client.name)

    def restarting_elsewhere(self) -> bool:
        """Whether another thread restarts the server now (from before the old one is revived until the
        new one's handshake is complete)."""
        return self.restarting and self.restarter != threading.get_ident()

    def renew_session(self, stale: str) -> None:
        """One new handshake for all the threads that found the same session expired."""
        with self._renew_lock:
            renewal, mine = self._renewing, self._renewing is None
            if mine:
                if self.transport.session_id != stale:
                    return  # another thread has renewed it already
                renewal = self._renewing = threading.Event()
        if not mine:
            renewal.wait(self.client.cfg.timeout)  # its handshake is bounded by the same timeout
            return
        try:
            self.client.log("the session expired; initializing again")
            self.client.renew()
        finally:
            with self._renew_lock:
                self._renewing = None
            renewal.set()


def kind_for(config) -> type[Transport]:
    """The transport an entry asks for, chosen where the session is built: a subprocess (stdio), or
    Streamable HTTP for a "url" (wire/ knows its transports, not which one an entry wants)."""
    if config.kind == "stdio":
        from beyond.wire.stdio import StdioTransport
        return StdioTransport
    from beyond.wire.http import HttpTransport  # imported only when a remote server is configured
    return HttpTransport
