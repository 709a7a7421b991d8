"""Beyond the tutorial: logins without a person, for CI, cron jobs and scripts (MCP's authorization extensions).

"oauth": {"grant": ...} in an entry takes the place of the browser login:
- "client_credentials" (RFC 6749 section 4.4; SEP-1046): the entry's clientId and clientSecret, the
  token endpoint method as auth/clients.py chooses it;
- "jwt_bearer" (RFC 7523 section 2.1; SEP-1933, workload identity federation): the entry's
  "assertion" (a JWT, usually ${VAR}) or "assertionFile", read again at every grant (a CI runner's
  tokens live minutes) as the trust question showed it: a regular file, of the project folder for a
  folder's entry, never through a link out, a FIFO or the kernel's files (/proc/self/environ would
  send the agent's environment); the server's error is the login's, with no other method or grant tried;
- "enterprise" (SEP-990): the user's ID token ("idToken") exchanged at the identity provider's
  "idpTokenEndpoint" (RFC 8693) for an identity assertion (ID-JAG) naming this authorization server
  (audience) and this server (resource), then presented to the authorization server with the JWT
  bearer grant, as the entry's client.
None of them opens a browser or asks anything; each is repeated when its token nears its end
(auth/provider.py). Secrets go only to the token endpoint the metadata names, or idpTokenEndpoint,
through the outbound check (auth/outbound.py); none is kept: only the tokens they bring are.
"""
from beyond.auth.errors import AuthError
from beyond.auth.metadata import post_form
from beyond.dirs import FolderError, UnsetVariable, expand, read_inside

GRANTS = ("client_credentials", "jwt_bearer", "enterprise")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
# An assertion (as written, as read from its file, or as the identity provider answers) is at most this long.
MAX_ASSERTION_BYTES = 64 * 1024


def granted(oauth, meta: dict, resource: str, scopes: list[str]) -> tuple[dict, dict]:
    """(the token answer, the client that got it) of the entry's grant at the authorization server of `meta`."""
    settings, clients = oauth.settings, oauth.clients
    client = clients.configured(meta)
    form = {"resource": resource, **({"scope": " ".join(scopes)} if scopes else {})}
    if settings["grant"] == "client_credentials":
        return oauth.token_request(meta, client, {"grant_type": "client_credentials", **form}), client
    if settings["grant"] == "jwt_bearer":
        # The server's error is the login's: no other method is tried.
        assertion, client = _assertion(settings, oauth.folder), {**client, "may_switch": False}
    else:
        assertion = _identity_assertion(oauth, meta, resource, scopes)
    return oauth.token_request(meta, client, {"grant_type": JWT_BEARER, "assertion": assertion, **form}), client


def _assertion(settings: dict, folder: str | None) -> str:
    """The workload's JWT: the entry's "assertion" expanded, or its "assertionFile" read now (within
    `folder`, the project folder of a folder's entry)."""
    try:
        if "assertion" in settings:
            return _bounded(expand(settings["assertion"], "oauth.assertion"), "oauth.assertion")
        path = expand(settings["assertionFile"], "oauth.assertionFile")
        raw = read_inside(path, MAX_ASSERTION_BYTES, root=folder)
    except (UnsetVariable, FolderError) as e:
        raise AuthError(f"oauth.assertionFile: {e}" if isinstance(e, FolderError) else str(e)) from None
    if raw is None:
        raise AuthError(f"oauth.assertionFile: {path} does not exist")
    return _bounded(raw.decode("utf-8", "replace").strip(), f"oauth.assertionFile {path}")


def _identity_assertion(oauth, meta: dict, resource: str, scopes: list[str]) -> str:
    """SEP-990's first step: the ID token exchanged at the identity provider for an ID-JAG for this
    authorization server and this resource."""
    settings = oauth.settings
    try:
        id_token = expand(settings["idToken"], "oauth.idToken")
        secret = expand(settings["idpClientSecret"], "oauth.idpClientSecret") \
            if settings.get("idpClientSecret") else None
    except UnsetVariable as e:
        raise AuthError(str(e)) from None
    idp = {"client_id": settings["idpClientId"], "client_secret": secret,
           "method": "client_secret_basic" if secret else "none"}
    answer = post_form(oauth.outbound, "oauth.idpTokenEndpoint", settings["idpTokenEndpoint"], idp, {
        "grant_type": TOKEN_EXCHANGE, "subject_token": id_token, "subject_token_type": ID_TOKEN,
        "requested_token_type": ID_JAG, "audience": meta["issuer"], "resource": resource,
        **({"scope": " ".join(scopes)} if scopes else {})})
    jag = answer.get("access_token")
    if not isinstance(jag, str) or not jag or answer.get("issued_token_type", ID_JAG) != ID_JAG:
        raise AuthError("the identity provider's answer holds no identity assertion (ID-JAG)")
    return _bounded(jag, "the identity provider's assertion")


def _bounded(assertion: str, what: str) -> str:
    if not assertion:
        raise AuthError(f"{what} is empty")
    if len(assertion.encode()) > MAX_ASSERTION_BYTES:
        raise AuthError(f"{what} is over {MAX_ASSERTION_BYTES >> 10} KB; no JWT is that long")
    return assertion
