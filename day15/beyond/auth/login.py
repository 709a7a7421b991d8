"""Beyond the tutorial: the login itself, where the user is: a browser, or a URL to open elsewhere.

auth/provider.py finds the authorization server and the client; here the authorization code is
fetched with PKCE S256 and a state, and exchanged for tokens. The code comes back to a listener on
127.0.0.1 (a random port, or the entry's "oauth": {"callbackPort"}, for a fixed redirect or
`ssh -L`). Where the user is, the login's Screen says: whether a browser may be opened (--no-browser
says no), and the console, where the redirect URL (or the code) may be pasted. The authorization URL
is opened with Python's webbrowser only where there is a browser to open (BROWSER, DISPLAY or
WAYLAND_DISPLAY is set, or on macOS): elsewhere, webbrowser would start a console browser in our
terminal. The URL is always printed; the listener still takes the redirect if it arrives. The
response's `iss` is checked as RFC 9207 says, before the code goes anywhere.
"""
import base64
import hashlib
import html
import http.server
import os
import queue
import re
import secrets
import sys
import threading
import time
import urllib.parse
import webbrowser

from beyond.auth.errors import AuthError
from beyond.auth.outbound import Refused
from beyond.auth.screen import Screen
from beyond.text import clean

# A code pasted alone: the characters authorization codes are made of (RFC 6749's VSCHAR, less
# those that would make it a query or an address).
BARE_CODE = re.compile(r"[A-Za-z0-9._~+/-]{1,4096}")
# How long a login may take, from the URL shown to the code received.
LOGIN_TIMEOUT_S = 300.0
# The page the browser lands on says what the terminal says; it waits this long for the token
# request's outcome (the token request's own bound, and a little).
PAGE_WAIT_S = 20.0
# A connection to the login's listener that sends no request within this long is closed.
CALLBACK_READ_S = 10.0
# A browser that has not said within this long whether it opened the login is taken as opened.
BROWSER_START_S = 2.0


class Outcome:
    """What the page of one redirect says, once the login knows: logged in, or why not."""

    def __init__(self) -> None:
        self._said, self.text = threading.Event(), "The login did not finish; see the terminal."

    def say(self, text: str) -> None:
        self.text = text
        self._said.set()

    def page(self) -> bytes:
        self._said.wait(PAGE_WAIT_S)
        return (f"<!doctype html><meta charset=utf-8><title>GeekAgent</title><p>{html.escape(self.text)}</p>").encode()


def authorize(oauth, meta: dict, resource: str, scopes: list[str], keep) -> dict:
    """One authorization code login (with `resource`): what keep(token answer, client) makes of the
    token answer, or AuthError. The browser's page says which it was."""
    try:  # the authorization server's word for the page the browser opens: checked before anything is shown
        endpoint = oauth.outbound.page(meta["authorization_endpoint"], "authorization_endpoint")
    except Refused as e:
        raise AuthError(str(e)) from None
    replies: queue.SimpleQueue = queue.SimpleQueue()
    verifier, state = secrets.token_urlsafe(48), secrets.token_urlsafe(24)
    fixed = oauth.settings.get("callbackPort")
    try:  # the port of the last login at this issuer first: its registration names that redirect
        listener = _listen(fixed or oauth.kept_port(meta["issuer"]), replies, state)
    except AuthError:
        if fixed:
            raise
        listener = _listen(0, replies, state)
    outcome = Outcome()
    try:
        redirect_uri = f"http://127.0.0.1:{listener.server_port}/callback"
        client = oauth.client_for(meta, redirect_uri)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": redirect_uri,
                 "code_challenge": challenge, "code_challenge_method": "S256", "state": state, "resource": resource}
        if scopes:
            query["scope"] = " ".join(scopes)
        url = endpoint + ("&" if "?" in endpoint else "?") + urllib.parse.urlencode(query)
        reply = _code_from_user(oauth.name, url, replies, state, oauth.screen)
        came = reply.pop("outcome", None)  # the listener's; a pasted address may name anything
        outcome = came if isinstance(came, Outcome) else outcome
        code = _checked(reply, state, meta)
        tokens = keep(oauth.token_request(meta, client, {"grant_type": "authorization_code", "code": code,
                                                         "redirect_uri": redirect_uri, "code_verifier": verifier,
                                                         "resource": resource}), client)
        outcome.say("Logged in. You can close this tab and go back to the terminal.")
        return tokens
    except AuthError as e:
        outcome.say(f"The login failed: {e}")
        raise
    finally:
        outcome.say(outcome.text)  # whatever happened, the page is not kept waiting
        listener.shutdown()
        listener.server_close()


def _listen(port: int, replies: queue.SimpleQueue, state: str) -> http.server.HTTPServer:
    """A server on 127.0.0.1 that puts the query of every GET /callback of this login (its `state`)
    into `replies`, with the Outcome its page waits for; a redirect of another login's is refused."""
    class Callback(http.server.BaseHTTPRequestHandler):
        timeout = CALLBACK_READ_S  # a connection that sends nothing holds no thread for long

        def do_GET(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            if parts.path != "/callback":
                self.send_error(404)
                return
            reply, outcome = dict(urllib.parse.parse_qsl(parts.query)), Outcome()
            if reply.get("state") == state:
                replies.put({**reply, "outcome": outcome})
            else:  # any local program can call the listener: not this login's
                outcome.say("This is not the login the terminal waits for.")
            page = outcome.page()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args) -> None:
            pass  # the query holds the code: it is never printed

    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Callback)
    except OSError as e:
        raise AuthError(f"cannot listen on 127.0.0.1:{port} for the login's redirect: {e.strerror}") from None
    server.daemon_threads, server.block_on_close = True, False  # a page still waiting never holds the login up
    threading.Thread(target=server.serve_forever, args=(0.05,), name="oauth-callback", daemon=True).start()
    return server


def _code_from_user(name: str, url: str, replies: queue.SimpleQueue, state: str, screen: Screen) -> dict:
    """Show the URL (and open it where a browser is), then wait for the redirect or a pasted one. A
    redirect for another login (another state: any local program can call the listener) is not ours
    and is waited past. In a terminal the wait is a question of the console's."""
    # The endpoint is the authorization server's word: checked (outbound.py), shown with its
    # control characters made visible, whole (a cut URL cannot be opened).
    print(f"Log in to {clean(name, one_line=True)}: {clean(url, one_line=True)}", flush=True)
    terminal, deadline, found = screen.console, time.monotonic() + LOGIN_TIMEOUT_S, []

    def came(wait: float = 0.0) -> bool:
        """Whether a redirect of this login's own came (waiting for one up to `wait`), or the time is up."""
        try:
            while not found:
                reply = replies.get(timeout=max(0.0, min(wait, deadline - time.monotonic()))) if wait \
                    else replies.get_nowait()
                found.extend([reply] if reply.get("state") == state else [])
        except queue.Empty:
            pass
        return bool(found) or time.monotonic() >= deadline
    if screen.browser and _browser_here() and _opened(url, came):
        print("(opened in your browser; waiting for the login to finish; Ctrl-C stops it)", flush=True)
    elif terminal is not None and terminal.terminal:
        with terminal.question():
            while not came():
                pasted = terminal.read_line("Open it in a browser, then paste the address it ends on, or the code "
                                            "(Ctrl-C stops): ", until=came)
                if pasted and pasted.strip():
                    return pasted_reply(pasted.strip(), state)
    while not came(0.2):  # in steps, so a Ctrl-C or SIGTERM is seen
        pass
    if found:
        return found[0]
    raise AuthError(f"no login within {LOGIN_TIMEOUT_S:g} s")


def pasted_reply(pasted: str, state: str) -> dict:
    """What a person pasted: the address the browser ended on (or its query), which must carry this
    login's state like any redirect; or a bare code alone (nothing but code characters), which is
    this login's by the person's word: it gets this login's state, so no parameter can set the check aside."""
    if BARE_CODE.fullmatch(pasted):
        return {"code": pasted, "state": state}
    query = urllib.parse.urlsplit(pasted).query if "://" in pasted else pasted.lstrip("?")
    return dict(urllib.parse.parse_qsl(query))


def _opened(url: str, came) -> bool:
    """webbrowser.open, on a thread of its own: a BROWSER that is a program of the terminal's runs
    until it exits, and the page it shows waits for this login. False if it said it could not open
    the URL within BROWSER_START_S; still running by then, or the redirect come (came()), is opened."""
    said: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=lambda: said.put(webbrowser.open(url)), name="oauth-browser", daemon=True).start()
    deadline = time.monotonic() + BROWSER_START_S
    while time.monotonic() < deadline:
        try:
            return bool(said.get(timeout=0.02))
        except queue.Empty:
            if came():
                return True
    return True


def _browser_here() -> bool:
    return bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) \
        or sys.platform == "darwin"


def _checked(reply: dict, state: str, meta: dict) -> str:
    """The code of an authorization response, after the issuer check of RFC 9207 and the state's."""
    supported = meta.get("authorization_response_iss_parameter_supported") is True
    if "iss" in reply and not meta.get("defaults"):  # a 2025-03-26 server's default endpoints name no issuer
        if reply["iss"] != meta["issuer"]:  # exact: no case folding, no trailing-slash or port normalisation
            raise AuthError("the login's answer names another issuer than the authorization server's; "
                                 "its code is not used")
    elif supported:
        raise AuthError("the login's answer has no iss, which the authorization server said it sends; "
                             "its code is not used")
    if reply.get("state") != state:
        raise AuthError("the login's answer is not for this login (its state differs)")
    if reply.get("error"):
        detail = reply.get("error_description") or reply["error"]
        raise AuthError(f"the login was refused: {str(detail)[:200]}")
    if not reply.get("code"):
        raise AuthError("the login's answer has no code")
    return reply["code"]
