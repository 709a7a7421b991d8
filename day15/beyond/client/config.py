"""Beyond the tutorial: a checked .geekagent/mcp.json.

The tutorial's connect_mcp_servers (mcp.py) reads mcpServers as it is. Here each entry is checked
before anything starts (an error names the file and the key), and Claude Desktop's and Claude
Code's extra keys are understood. `${VAR}` is expanded, and a server gets only a safe part of the
agent's environment plus its own `env`, when it starts (wire/process.py).
"""
import difflib
import json
import os
from dataclasses import dataclass, field

from beyond.auth.clients import TOKEN_METHODS
from beyond.auth.grants import GRANTS
from beyond.dirs import UnsetVariable, decode_json, expand, parse_json
from mcp import McpError, McpServerConfig

MCP_CONFIG_PATH = ".geekagent/mcp.json"

# The tutorial waits 10 s for everything; real servers need longer: a first `npx -y` download, a
# browser tool, a fetch. The official SDKs wait 60 s for a call. Both are per server in mcp.json.
CALL_TIMEOUT_S = 60.0      # "timeout": a request after start-up
STARTUP_TIMEOUT_S = 30.0   # "startupTimeout": initialize and tools/list
TASK_TIMEOUT_S = 600.0     # "taskTimeout": a tool call the server runs as a task (client/tasks.py), polled
# The longest request timeout an entry may set: an hour is longer than any tool should take, and
# larger numbers overflow the waits they are given to.
MAX_TIMEOUT_S = 3600.0
# "protocol": the handshake of revisions up to 2025-11-25 ("legacy"), the stateless 2026-07-28
# revision only, or "auto": a probe that picks (client/revisions.py).
PROTOCOLS = ("legacy", "2026-07-28", "auto")
# The keys of an entry this client reads.
ENTRY_KEYS = ("command", "args", "env", "timeout", "startupTimeout", "taskTimeout", "cwd", "disabled", "type", "url",
              "headers", "allowInsecure", "protocol", "oauth", "elicitation", "alwaysLoad", "roots", "sandbox")
# "oauth": what a remote entry may say about its login, each key with the check it must pass.
OAUTH_KEYS = {
    "clientId": (lambda v: isinstance(v, str) and v, "a non-empty string (a client registered by hand)"),
    "clientSecret": (lambda v: isinstance(v, str), "a string (${VAR} is expanded)"),
    "clientMetadataUrl": (lambda v: isinstance(v, str) and v.startswith("https://") and v.count("/") > 2,
                          "an https URL with a path (a client ID metadata document)"),
    "scopes": (lambda v: isinstance(v, list) and all(isinstance(s, str) and s and " " not in s for s in v),
               "a list of scope names"),
    "callbackPort": (lambda v: type(v) is int and 0 < v < 65536, "a port number (1-65535)"),
    "tokenEndpointAuthMethod": (lambda v: v in TOKEN_METHODS, " or ".join(f'"{m}"' for m in TOKEN_METHODS)),
    # A login without a person (auth/grants.py), and what each grant needs.
    "grant": (lambda v: v in GRANTS, " or ".join(f'"{g}"' for g in GRANTS)),
    "assertion": (lambda v: isinstance(v, str) and v, "a JWT (usually ${VAR})"),
    "assertionFile": (lambda v: isinstance(v, str) and v, "the path of a file holding a JWT"),
    "idpTokenEndpoint": (lambda v: isinstance(v, str) and v.startswith(("https://", "http://")),
                         "the identity provider's token endpoint, an https URL"),
    "idpClientId": (lambda v: isinstance(v, str) and v, "a non-empty string (this agent at the identity provider)"),
    "idpClientSecret": (lambda v: isinstance(v, str), "a string (${VAR} is expanded)"),
    "idToken": (lambda v: isinstance(v, str) and v, "the user's ID token (usually ${VAR})"),
    # The client proves itself with a key (private_key_jwt, auth/clients.py); tokens bound to one (auth/dpop.py).
    "privateKeyFile": (lambda v: isinstance(v, str) and v, "the path of an unencrypted P-256 key in PEM"),
    "dpop": (lambda v: isinstance(v, bool), "true or false (false: no DPoP even where the server offers it)"),
}
# The keys each grant needs, and the grant each of its own keys belongs to.
GRANT_NEEDS = {"client_credentials": ("clientId",), "jwt_bearer": ("clientId",),
               "enterprise": ("clientId", "clientSecret", "idpTokenEndpoint", "idpClientId", "idToken")}
GRANT_OF = {"assertion": "jwt_bearer", "assertionFile": "jwt_bearer", "idpTokenEndpoint": "enterprise",
            "idpClientId": "enterprise", "idpClientSecret": "enterprise", "idToken": "enterprise"}
# Keys that say contradicting things: an entry with both fails, naming them.
EXCLUSIVE = (("grant", "callbackPort"), ("grant", "clientMetadataUrl"), ("assertion", "assertionFile"),
             ("clientSecret", "privateKeyFile"))

# The "oauth" values ${VAR} is expanded in when they are used (auth/provider.py, auth/grants.py).
EXPANDED_OAUTH = ("clientSecret", "assertion", "assertionFile", "idpClientSecret", "idToken", "privateKeyFile")


@dataclass
class ServerConfig(McpServerConfig):
    """The tutorial's entry (command, args, env) plus the keys real configs use."""
    timeout: float = CALL_TIMEOUT_S              # seconds for a tool call (and any other request)
    startup_timeout: float = STARTUP_TIMEOUT_S   # seconds for initialize and for tools/list
    task_timeout: float = TASK_TIMEOUT_S         # seconds a task may run before it is cancelled
    cwd: str | None = None              # Claude Desktop's working directory for the server
    disabled: bool = False              # Claude Desktop's switch: configured, not started
    kind: str = "stdio"                 # "type": "stdio", or "http" for a remote server (wire/http.py)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    allow_insecure: bool = False        # plain http to another host, only when the entry says so
    protocol: str = "legacy"            # one of PROTOCOLS
    oauth: dict = field(default_factory=dict)  # a remote server's login (auth/provider.py): OAUTH_KEYS
    elicitation: str = "decline"        # without a terminal, a form is declined, or accepted with its "defaults"
    always_load: bool | list = False    # tools offered even when the rest wait for tool_search (servers/toolsearch.py)
    roots: list | bool | None = None    # the folders it is given (client/roots.py); false: no roots capability
    folder_entry: bool = False          # from the folder's own mcp.json, not the user's (client/roots.py)
    sandbox: bool | dict | None = None  # a stdio server confined (wire/sandbox.py); None: as --sandbox says
    overruled: bool = False             # its "sandbox": false, which --sandbox refused (wire/sandbox.py)
    shown_roots: list | None = None     # a folder entry's roots as the trust question showed them (client/roots.py)
    problem: str | None = None          # what is wrong with the entry (file and key): shown, not started
    login_files: tuple = ()             # what any entry of its file logs in with: kept from a sandbox (wire/inside.py)


def load_mcp_config(path: str = MCP_CONFIG_PATH, raw: bytes | None = None) -> dict[str, ServerConfig]:
    """Parse mcp.json (its bytes as read once, or the file at `path` when `raw` is None); a missing
    file means no servers, one that is not JSON raises McpError naming it, and a broken entry is
    that server's problem only (its `problem` names the file and the key), so the others start."""
    try:
        data = parse_json(path) if raw is None else decode_json(path, raw)
    except ValueError as e:
        raise McpError(str(e)) from None
    if data is None and (raw is not None or os.path.exists(path)):  # JSON's null, not a missing file
        raise McpError(f'{path}: holds null, not an object; write {{"mcpServers": {{...}}}}')
    key = "servers" if isinstance(data, dict) and "mcpServers" not in data and "servers" in data else "mcpServers"
    servers = {} if data is None else data.get(key, {}) if isinstance(data, dict) else None  # "servers": VS Code's
    if not isinstance(servers, dict):
        raise McpError(f"{path}: \"{key}\" must be an object of server name -> config")
    configs = {name: _entry(f"{path}: {key}.{name}", entry) for name, entry in servers.items()}
    logins = tuple(_login_files(configs.values()))
    for config in configs.values():
        config.login_files = logins
    return configs


def _login_files(configs) -> list[str]:
    """Every file an entry's login reads (its key, its assertion), resolved, ${VAR} expanded where set."""
    found = []
    for config in configs:
        for key in ("assertionFile", "privateKeyFile"):
            written = config.oauth.get(key) if isinstance(config.oauth, dict) else None
            try:
                path = expand(written, f"oauth.{key}") if isinstance(written, str) and written else ""
            except UnsetVariable:
                continue
            found += [os.path.realpath(os.path.expanduser(path))] if path else []
    return found


def _entry(where: str, entry: object) -> ServerConfig:
    try:
        return parse_server_config(where, entry)
    except McpError as e:
        return ServerConfig(command="", problem=str(e))


def parse_server_config(where: str, entry: object) -> ServerConfig:
    """Check one mcpServers entry; the error names `where` and the key to fix."""
    if not isinstance(entry, dict):
        raise McpError(f"{where}: must be an object with \"command\"")
    misspelt = _misspelt(entry) or _not_ours(entry)
    if misspelt:
        raise McpError(f"{where}: {misspelt}")
    if "command" in entry and "url" in entry:  # which one would run is not what the entry says
        raise McpError(f"{where}: has both \"command\" and \"url\"; keep \"command\" for a local server "
                       "or \"url\" for a remote one")
    config = ServerConfig(command=entry.get("command", ""), args=entry.get("args", []),
                          env=entry.get("env", {}), timeout=entry.get("timeout", CALL_TIMEOUT_S),
                          startup_timeout=entry.get("startupTimeout", STARTUP_TIMEOUT_S),
                          task_timeout=entry.get("taskTimeout", TASK_TIMEOUT_S),
                          cwd=entry.get("cwd"), disabled=entry.get("disabled", False), url=entry.get("url"),
                          kind=entry.get("type", "http" if "url" in entry else "stdio"),
                          headers=entry.get("headers", {}), allow_insecure=entry.get("allowInsecure", False),
                          protocol=entry.get("protocol", "legacy"), oauth=entry.get("oauth", {}),
                          elicitation=entry.get("elicitation", "decline"), always_load=entry.get("alwaysLoad", False),
                          roots=entry.get("roots"), sandbox=entry.get("sandbox"))
    problem = _problem(config)
    if problem:
        raise McpError(f"{where}: {problem}")
    config.timeout, config.startup_timeout = float(config.timeout), float(config.startup_timeout)
    config.task_timeout = float(config.task_timeout)
    return config


def _misspelt(entry: dict) -> str | None:
    """An unknown key that is nearly a known one ("comand"): named, with the one it was meant to be.
    Other unknown keys (other clients' own, such as "autoApprove") are left alone."""
    for key in entry:
        if key in OAUTH_KEYS:  # written beside "oauth" instead of inside it: ignored, the login would go wrong
            return f"\"{key}\" belongs inside \"oauth\" (did you mean \"oauth.{key}\"?)"
        if isinstance(key, str) and key not in ENTRY_KEYS:
            close = difflib.get_close_matches(key, ENTRY_KEYS, n=1, cutoff=0.8)
            if close:
                return f"unknown key \"{key}\" (did you mean \"{close[0]}\"?)"
    return None


def _not_ours(entry: dict) -> str | None:
    """What VS Code's files may say that this client cannot do, named (its ${input:...} prompts, envFile)."""
    if "envFile" in entry:
        return "\"envFile\" is not supported; put the variables in the project's .env"
    text = json.dumps(entry)
    if "${input:" in text:
        return "${input:...} (a value VS Code asks for) is not supported; use ${VAR} and set VAR in .env"
    return None


def _problem(c: ServerConfig) -> str | None:
    """The first thing wrong with an entry, or None."""
    if c.kind not in ("stdio", "http", "streamable-http", "sse"):
        return f"\"type\" must be \"stdio\" or \"http\", not {c.kind!r}"
    problem = next((message for ok, message in _checks(c, c.kind != "stdio") if not ok), None)
    return problem or (_oauth_problem(c.oauth) if c.oauth else None)


def _checks(c: ServerConfig, remote: bool) -> list[tuple[object, str]]:
    """(whether it holds, what to fix) for each key of an entry but "oauth"'s own."""
    return [
        (remote or (isinstance(c.command, str) and c.command), "\"command\" must be a non-empty string"),
        (not remote or (isinstance(c.url, str) and c.url), "\"url\" must be a non-empty string"),
        (isinstance(c.headers, dict) and all(isinstance(v, str) for v in c.headers.values()),
         "\"headers\" must be an object of strings"),
        (isinstance(c.allow_insecure, bool), "\"allowInsecure\" must be true or false"),
        (isinstance(c.args, list) and all(isinstance(a, str) for a in c.args),
         "\"args\" must be a list of strings"),
        (isinstance(c.env, dict) and all(isinstance(v, str) for v in c.env.values()),
         "\"env\" must be an object of strings"),
        (_seconds(c.timeout), f"\"timeout\" must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}"),
        (_seconds(c.startup_timeout),
         f"\"startupTimeout\" must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}"),
        (_seconds(c.task_timeout),
         f"\"taskTimeout\" must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}"),
        (c.cwd is None or isinstance(c.cwd, str), "\"cwd\" must be a string"),
        (isinstance(c.disabled, bool), "\"disabled\" must be true or false"),
        (c.protocol in PROTOCOLS, "\"protocol\" must be " + ", ".join(f'"{p}"' for p in PROTOCOLS[:-1])
         + f' or "{PROTOCOLS[-1]}"'),
        (isinstance(c.oauth, dict), "\"oauth\" must be an object"),
        (c.elicitation in ("decline", "defaults"), "\"elicitation\" must be \"decline\" or \"defaults\""),
        (not c.oauth or remote, "\"oauth\" is for a remote server (\"url\")"),
        (isinstance(c.always_load, bool) or isinstance(c.always_load, list) and all(
            isinstance(t, str) for t in c.always_load), "\"alwaysLoad\" must be true, false or a list of tool names"),
        (c.sandbox is None or isinstance(c.sandbox, bool) or _sandbox_asked(c.sandbox),
         "\"sandbox\" must be true, false or {\"read\": [folders], \"write\": [folders], \"network\": true or false}"),
        (not c.sandbox or not remote, "\"sandbox\" confines a local server (\"command\"), not a \"url\""),
        (c.roots is None or c.roots is False
         or isinstance(c.roots, list) and all(isinstance(r, str) and r for r in c.roots),
         "\"roots\" must be a list of folders, or false"),
    ]


def _oauth_problem(oauth: dict) -> str | None:
    """The first key of "oauth" that is unknown or wrong, else what makes its grant unusable."""
    for key, value in oauth.items():
        check = OAUTH_KEYS.get(key)
        if check is None:
            return f"\"oauth.{key}\" is not a key of \"oauth\" ({', '.join(OAUTH_KEYS)})"
        if not check[0](value):
            return f"\"oauth.{key}\" must be {check[1]}"
    return _grant_problem(oauth)


def _grant_problem(oauth: dict) -> str | None:
    """What makes an entry's grant keys unusable: a contradiction, a key of another grant, one missing."""
    both = next((pair for pair in EXCLUSIVE if all(k in oauth for k in pair)), None)
    if both:
        return f"\"oauth.{both[0]}\" and \"oauth.{both[1]}\" cannot go together; keep one"
    grant = oauth.get("grant")
    stray = next((k for k in oauth if GRANT_OF.get(k, grant) != grant), None)
    if stray:
        return f"\"oauth.{stray}\" is for \"grant\": \"{GRANT_OF[stray]}\""
    missing = [k for k in GRANT_NEEDS.get(grant, ()) if k not in oauth]
    if grant == "jwt_bearer" and not ({"assertion", "assertionFile"} & set(oauth)):
        missing.append("assertion (or assertionFile)")
    if missing:
        return f"\"grant\": \"{grant}\" needs \"oauth.{missing[0]}\""
    if grant == "client_credentials" and not ({"clientSecret", "privateKeyFile"} & set(oauth)):
        return "\"grant\": \"client_credentials\" needs \"oauth.clientSecret\" (or \"oauth.privateKeyFile\")"
    if "privateKeyFile" in oauth and "clientId" not in oauth:
        return "\"oauth.privateKeyFile\" needs \"oauth.clientId\", the client the key proves"
    return None


def _sandbox_asked(value: object) -> bool:
    """{"read": [...], "write": [...], "network": bool}, each key optional."""
    folders = all(isinstance(value.get(k, []), list) and all(isinstance(p, str) and p for p in value.get(k, []))
                  for k in ("read", "write")) if isinstance(value, dict) else False
    return folders and set(value) <= {"read", "write", "network"} and isinstance(value.get("network", False), bool)


def _seconds(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value <= MAX_TIMEOUT_S


def expanded(config: ServerConfig) -> list[tuple[str, str]]:
    """(where, the value as written) of every value of an entry in which ${VAR} is expanded when the
    server starts or logs in: what the trust question names the variables of (folder/trust.py). A key
    added later that expands a value belongs here in the same change."""
    values = [("command", config.command)] + [(f"args[{i}]", arg) for i, arg in enumerate(config.args)]
    values += [(f"env {key}", value) for key, value in config.env.items()] + [("url", config.url or "")]
    values += [(f"header {key}", value) for key, value in config.headers.items()]
    values += [(f"oauth.{key}", config.oauth[key]) for key in EXPANDED_OAUTH if isinstance(config.oauth.get(key), str)]
    return [(where, value) for where, value in values if isinstance(value, str)]
