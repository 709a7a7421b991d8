"""Beyond the tutorial: where a login may go. Every URL a login opens or fetches passes this one check.

A remote server's metadata names the URLs of its login: the page the browser opens, and the
metadata, registration, token and revocation endpoints the agent itself fetches (with the login
code, the PKCE verifier and any client secret). The server is untrusted: its metadata could send
the browser to `file:` or a `--renderer-cmd-prefix=...` option, or the agent to a service on this
machine or the cloud's metadata address. So a page opens only as an absolute https URL with a host
(plain http only to this machine, or to the server's own host for an entry with "allowInsecure"),
and a page or a fetch goes no closer than the server itself: loopback only for a loopback server,
private networks only for a server on one, link-local and unspecified addresses never (the browser's
own private-network protections do not hold for a navigation the agent starts). Every address a
name resolves to is checked, and the connection is made to the address checked, so DNS cannot
change between the check and the use. A URL a server asks the user to open shows the host a
browser would open, or is declined where parsers could disagree.
"""
import ipaddress
import re
import socket
import urllib.parse

from beyond.text import clean, shorten
from beyond.net import is_this_machine

# How near an address is, from this machine outward; a login may fetch nothing nearer than its server.
LOOPBACK, PRIVATE, PUBLIC = 0, 1, 2
NEVER = -1
_NETWORKS = [(LOOPBACK, n) for n in ("127.0.0.0/8", "::1/128")] + \
    [(PRIVATE, n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")] + \
    [(NEVER, n) for n in ("0.0.0.0/8", "169.254.0.0/16", "fe80::/10", "::/128", "224.0.0.0/4", "240.0.0.0/4",
                          "ff00::/8")]
NETWORKS = [(kind, ipaddress.ip_network(network)) for kind, network in _NETWORKS]
NAMES = {LOOPBACK: "this machine", PRIVATE: "a private network", NEVER: "a link-local or unspecified address"}
# Characters no URL of a login or a question may hold: white space, controls, and the backslash,
# which browsers read as a slash (so https://evil.test\@good.test opens evil.test).
UNSAFE = re.compile(r"[\x00-\x20\x7f-\x9f\\\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]")
# A host as browsers compare it, once made ASCII: letters, digits, dots and hyphens.
PLAIN_HOST = re.compile(r"[a-z0-9.-]+")


class Refused(ValueError):
    """A URL of a login that may not be opened or fetched; the message names it and why."""


def kind_of(address: str) -> int:
    """LOOPBACK, PRIVATE, PUBLIC or NEVER for one IP address (an IPv4-mapped IPv6 one as its IPv4)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return next((kind for kind, network in NETWORKS if ip.version == network.version and ip in network), PUBLIC)


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` stands for (itself, when it is one); Refused when it resolves to none."""
    try:
        return [str(ipaddress.ip_address(host.strip("[]")))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as e:
        raise Refused(f"cannot resolve {host}: {getattr(e, 'strerror', None) or e}") from None
    return list(dict.fromkeys(info[4][0] for info in found))


class Outbound:
    """The check of one remote server's login: how near the server is, and what it may make us open or fetch."""

    def __init__(self, server_url: str, allow_insecure: bool = False) -> None:
        parts = urllib.parse.urlsplit(server_url)
        self.server_host = (parts.hostname or "").lower()
        self.allow_insecure = allow_insecure
        self._server_kind: int | None = None  # resolved on first use: a login may never need it

    def server_kind(self) -> int:
        """The farthest kind of the server's own addresses: one with a public address is a public server."""
        if self._server_kind is None:
            try:
                kinds = [kind_of(a) for a in resolve(self.server_host, 443)]
            except Refused:
                kinds = [PUBLIC]  # the transport will fail on it anyway; nothing nearer is allowed meanwhile
            self._server_kind = max(kinds)
        return self._server_kind

    def page(self, url: object, field: str) -> str:
        """A page for the browser (the authorization endpoint): returned when it may be opened, else Refused."""
        parts = self._parts(url, field)
        host = parts.hostname or ""
        local = is_this_machine(host)
        if parts.scheme != "https" and not (parts.scheme == "http" and (
                local or (self.allow_insecure and host.lower() == self.server_host))):
            raise Refused(f"{field} {_shown(url)} is not an https URL; no login page is opened")
        self._no_nearer(parts, url, field, "no login page is opened there")
        return url

    def connection(self, url: object, field: str, timeout: float) -> tuple[object, str]:
        """A connection for one request of the login, made to an address checked, and the path to ask
        for; Refused when the URL or any address its host resolves to may not be fetched."""
        parts = self._parts(url, field)
        port, addresses = self._no_nearer(parts, url, field, "no login request goes there")
        if parts.scheme != "https" and not (parts.scheme == "http" and self._insecure_ok(parts.hostname)):
            raise Refused(f"{field} {_shown(url)} is not https; a login is only spoken over https")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return _pinned(parts.hostname, port, addresses[0], timeout, parts.scheme == "https"), path

    def _no_nearer(self, parts: urllib.parse.SplitResult, url: str, field: str, so: str) -> tuple[int, list[str]]:
        """(port, addresses) of the URL's host, each checked to be no nearer than the server; else Refused."""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = resolve(parts.hostname, port)
        floor = self.server_kind()
        for address in addresses:
            kind = kind_of(address)
            if kind == NEVER or kind < floor:
                raise Refused(f"{field} {_shown(url)} leads to {NAMES[kind]} ({address}), nearer than the server "
                              f"{self.server_host}; {so}")
        return port, addresses

    def _insecure_ok(self, host: str) -> bool:
        """Plain http: to this machine for a server on it, or to the server's own host when its entry allows it."""
        return (is_this_machine(host) and self.server_kind() == LOOPBACK) or \
            (self.allow_insecure and host.lower() == self.server_host)

    @staticmethod
    def _parts(url: object, field: str) -> urllib.parse.SplitResult:
        if not isinstance(url, str) or not url or url.startswith("-") or UNSAFE.search(url):
            raise Refused(f"{field} {_shown(url)} is no URL a login may use (it must be an absolute https URL)")
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # raises for a port that is no number
        except ValueError:
            raise Refused(f"{field} {_shown(url)} cannot be parsed as a URL") from None
        if parts.scheme not in ("https", "http") or not parts.hostname or "@" in parts.netloc:
            raise Refused(f"{field} {_shown(url)} must be an absolute https URL with a host (and no user name)")
        return parts


def _pinned(host: str, port: int, address: str, timeout: float, tls: bool):
    """An HTTP(S) connection to `host` that connects to the one `address` checked for it (the
    certificate is still checked against the host's name)."""
    import http.client  # here: with ssl it slows a script's start-up (net.py says so too); few servers log in
    import ssl

    class Pinned(http.client.HTTPSConnection if tls else http.client.HTTPConnection):
        def connect(self) -> None:
            sock = socket.create_connection((address, self.port), self.timeout)
            self.sock = context.wrap_socket(sock, server_hostname=self.host) if tls else sock
    context = ssl.create_default_context() if tls else None
    return Pinned(host, port, timeout=timeout, **({"context": context} if tls else {}))


def page_host(url: str) -> str | None:
    """The host a browser opens for `url` (an http or https URL), as it would show it: lowercased,
    in punycode (xn--) when it is not ASCII; None where browsers and Python's parser could
    disagree (a backslash, white space or a control, a user name before the host, a
    percent-escape or a number that is no plain IPv4 address in the host), so it is never shown
    as anything but what opens."""
    if not isinstance(url, str) or UNSAFE.search(url):
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 address, which urllib gives without its brackets
        try:
            return f"[{ipaddress.IPv6Address(host)}]"
        except ValueError:
            return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if not PLAIN_HOST.fullmatch(host):
        return None
    last = host.rstrip(".").rsplit(".", 1)[-1]
    if (last.isdigit() or last.startswith("0x")) and not _plain_ipv4(host):
        return None  # browsers read 0x7f.1 or 2130706433 as an IPv4 address; shown, it would mislead
    return host


def _plain_ipv4(host: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(host)) == host
    except ValueError:
        return False


def _shown(value: object) -> str:
    """A URL in an error: made visible and bounded (it is the server's word)."""
    return repr(shorten(clean(str(value), one_line=True), 200))
