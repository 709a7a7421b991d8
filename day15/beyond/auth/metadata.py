"""Beyond the tutorial: what the OAuth login (auth/provider.py) asks of servers: metadata and requests.

A server's protected resource metadata (RFC 9728: the challenge's resource_metadata, else the
path-based, else the root well-known URL), checked to name this server; its authorization server's
metadata (RFC 8414, then OpenID discovery, in the specification's order), checked to name the issuer
it was found by, exactly, and to offer PKCE S256 (a 2025-03-26 server without the first is its own
authorization server: its origin's metadata, else the default endpoints); and form and JSON requests
to that server, each with one deadline, over https (or to this machine), never following a redirect. A 401's challenge
(WWW-Authenticate: Bearer resource_metadata=..., scope=...) is read here too.
"""
import base64
import json
import re
import time
import urllib.parse

from beyond import secrets
from beyond.auth.errors import AuthError
from beyond.auth.outbound import Refused
from beyond.text import clean
from beyond.net import Cutoff, read_limited, reason_of

# Bearer challenge parameters: name=value or name="quoted value".
CHALLENGE_PARAM = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')

# Every exchange with an authorization server or a metadata URL ends by this.
FETCH_TIMEOUT_S = 15.0
MAX_DOCUMENT_BYTES = 1 << 20
# What a form to an authorization server may hold that proves the client or the user (RFC 6749, 7523, 8693).
FORM_SECRETS = ("client_secret", "client_assertion", "assertion", "subject_token", "actor_token", "refresh_token",
                "code", "code_verifier", "token")


class Answered(AuthError):
    """An error answer of the authorization server: its HTTP status and OAuth error code ("invalid_client")."""

    def __init__(self, message: str, status: int, code: str | None, nonce: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.nonce = status, code, nonce  # nonce: its DPoP-Nonce header (dpop.py)


class NotFound(AuthError):
    """None of the places a document may be at has it."""


class NotAllowed(AuthError):
    """A URL of the login that may not be fetched (auth/outbound.py): the login fails there, it never
    goes on to the next place to look."""


def canonical(url: str) -> str:
    """A URL as RFC 8707 compares resources: scheme and host lowercased, no default port, fragment or trailing slash."""
    parts = urllib.parse.urlsplit(url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port and parts.port != {"http": 80, "https": 443}.get(parts.scheme.lower()) else ""
    return urllib.parse.urlunsplit((parts.scheme.lower(), host + port, parts.path.rstrip("/"), parts.query, ""))


def discover(outbound, url: str, found: dict) -> tuple[dict, dict]:
    """(protected resource metadata, authorization server metadata), both checked; every URL fetched
    passes `outbound` (outbound.py's Outbound). A server with no protected resource metadata is, as
    MCP 2025-03-26 has it, its own authorization server: ({}, its origin's metadata or defaults)."""
    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    urls = [found["resource_metadata"]] if found.get("resource_metadata") else []
    urls += ([f"{origin}/.well-known/oauth-protected-resource{path}"] if path else []) + \
        [f"{origin}/.well-known/oauth-protected-resource"]
    try:
        prm = first_document(outbound, urls, "protected resource metadata")
    except NotFound:
        return {}, metadata_for(outbound, origin, legacy=True)
    resource = prm.get("resource")
    if isinstance(resource, str) and not names(url, resource):
        raise AuthError(f"the protected resource metadata names another resource ({resource}), "
                             f"not {url}; no login is tried")
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthError("the protected resource metadata names no authorization server")
    return prm, server_metadata(outbound, servers[0])


def same_issuer(named: object, found_at: str) -> bool:
    """The issuer the metadata names is the one it was found by, exactly or but for one trailing slash
    (the official Python SDK names http://localhost:PORT/ for http://localhost:PORT); any other
    difference is another issuer (mix-up protection)."""
    return isinstance(named, str) and (named == found_at or named in (found_at + "/", found_at.removesuffix("/")))


def names(url: str, resource: str) -> bool:
    """The metadata's resource is the server's URL, or its origin or a path above it."""
    ours, theirs = canonical(url), canonical(resource)
    return ours == theirs or ours.startswith(theirs + "/")


def metadata_for(outbound, issuer: str, legacy: bool = False) -> dict:
    """The metadata of `issuer`; for a 2025-03-26 server (`legacy`), where none is published, its
    default endpoints (/authorize, /token, /register at the origin), marked "defaults": there is then
    no issuer to compare an answer's iss with, and PKCE S256 is used as that revision requires."""
    try:
        return server_metadata(outbound, issuer)
    except NotFound:
        if not legacy:
            raise
    return {"issuer": issuer, "authorization_endpoint": f"{issuer}/authorize", "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register", "code_challenge_methods_supported": ["S256"],
            "defaults": True}


def server_metadata(outbound, issuer: str) -> dict:
    parts = urllib.parse.urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if path:
        urls = [f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}", f"{origin}{path}/.well-known/openid-configuration"]
    else:
        urls = [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    meta = first_document(outbound, urls, "authorization server metadata")
    if not same_issuer(meta.get("issuer"), issuer):
        raise AuthError(f"the authorization server metadata names the issuer {meta.get('issuer')!r}, "
                             f"not {issuer!r}, where it was found; no login is tried")
    if "S256" not in (meta.get("code_challenge_methods_supported") or []):
        raise AuthError(f"the authorization server {issuer} does not offer PKCE with S256; no login is tried")
    for key in ("authorization_endpoint", "token_endpoint"):
        if not isinstance(meta.get(key), str):
            raise AuthError(f"the authorization server metadata has no {key}")
    return meta


def post_form(outbound, field: str, url: str, client: dict, form: dict, expect_json: bool = True,
              extra: dict | None = None) -> dict:
    """A form to the authorization server as `client` (client_id, client_secret, method), with `extra`
    headers (a DPoP proof). client_id is in every form, Basic or not: servers that read it from the
    form alone (the Python SDK's) need it."""
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json", **(extra or {})}
    form = {**form, "client_id": client["client_id"]}
    for key in FORM_SECRETS:  # masked from now on; each assertion is new and replaces the last of its kind
        secrets.add(form.get(key) or client.get(key), key, rotating=f"{client['client_id']} {key}", issued=True)
    if client["method"] == "client_secret_basic" and client.get("client_secret"):
        pair = ":".join(urllib.parse.quote(client[key], safe="") for key in ("client_id", "client_secret"))
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif client["method"] == "client_secret_post" and client.get("client_secret"):
        form["client_secret"] = client["client_secret"]
    return exchange(outbound, field, "POST", url, urllib.parse.urlencode(form).encode(), headers, expect_json)


def post_json(outbound, field: str, url: str, body: dict) -> dict:
    return exchange(outbound, field, "POST", url, json.dumps(body).encode(),
                    {"Content-Type": "application/json", "Accept": "application/json"}, True)


def first_document(outbound, urls: list[str], what: str) -> dict:
    tried = []
    for url in urls:
        try:
            return exchange(outbound, what, "GET", url, None, {"Accept": "application/json"}, True)
        except NotAllowed:
            raise
        except AuthError as e:
            tried.append(str(e))
    raise NotFound(f"no {what} found ({'; '.join(tried)})")


def exchange(outbound, field: str, method: str, url: str, body: bytes | None, headers: dict,
             expect_json: bool) -> dict:
    """One request by FETCH_TIMEOUT_S, to an address `outbound` allows; the JSON object it answered
    (AuthError otherwise), never following a redirect."""
    try:
        connection, path = outbound.connection(url, field, FETCH_TIMEOUT_S)
    except Refused as e:
        raise NotAllowed(str(e)) from None
    try:
        with Cutoff(connection, time.monotonic() + FETCH_TIMEOUT_S):
            connection.request(method, path, body, headers)
            response = connection.getresponse()
            raw = read_limited(response, MAX_DOCUMENT_BYTES, f"the answer of {url}")
    except (OSError, ValueError) as e:
        raise AuthError(f"{url}: {reason_of(e)}") from None
    finally:
        connection.close()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        data = None
    if response.status >= 400:
        detail = data.get("error_description") or data.get("error") if isinstance(data, dict) else None
        code = data.get("error") if isinstance(data, dict) and isinstance(data.get("error"), str) else None
        raise Answered(f"{url}: HTTP {response.status}" + (f" ({clean(str(detail)[:200], one_line=True)})"
                                                            if detail else ""), response.status, code,
                       response.getheader("DPoP-Nonce"))
    if expect_json and not isinstance(data, dict):
        raise AuthError(f"{url}: the answer is not a JSON object")
    return data if isinstance(data, dict) else {}


def challenge(header: str | None) -> dict[str, str]:
    """The parameters of a WWW-Authenticate Bearer (or DPoP) challenge (resource_metadata, scope, error),
    keys lowercased."""
    scheme = (header or "").strip().split(" ", 1)[0].lower()
    if scheme not in ("bearer", "dpop"):
        return {}
    return {m.group(1).lower(): (m.group(2).replace('\\"', '"') if m.group(2) is not None else m.group(3))
            for m in CHALLENGE_PARAM.finditer(header.strip()[len(scheme):])}
