"""Beyond the tutorial: /mcp login and /mcp logout, the logins of a set of remote servers (connect.py's
Servers takes them in as Logins). The tutorial's servers are local programs and log in nowhere.
"""
from beyond.auth.errors import AuthError
from beyond.auth.provider import FRESH, OAuth
from beyond.client.errors import ServerError
from beyond.dirs import UnsetVariable, expand
from beyond.servers.registry import claim_names
from beyond.servers.status import McpStatus
from mcp import McpError


class Logins:
    """The login verbs of Servers: they use its entries (_configs), statuses and lock, its client(), _forget()
    and _connected()."""

    def login(self, name: str) -> str:
        """/mcp login <name>: start a remote server again, logging in when it asks; what came of it."""
        config = self._configs.get(name)
        if config is None or config.kind == "stdio" or config.disabled or config.problem:
            raise McpError(_no_remote(name))
        self._forget(name)
        client = self.client(name, config)
        try:
            client.start(login=FRESH)  # a new login, whatever tokens are stored (they may be refused)
            error = None
        except McpError as e:
            error = e
        except BaseException:  # Ctrl-C while the login waits: nothing of it stays
            client.stop()
            raise
        with self._lock:
            if error is None:
                claim_names({s.server: s.client for s in self._statuses.values() if s.client} | {name: client},
                            self._contested)
            self._statuses[name] = self._connected(name, client if error is None else None, error)
        count = len(self._statuses[name].tools)
        return str(error) if error else f"{count} tool{'' if count == 1 else 's'}; " \
            f"{client.login_status() or 'the server asked for no login'}"

    def logout(self, name: str) -> str:
        """/mcp logout <name>: revoke and forget the server's tokens, and stop it."""
        config = self._configs.get(name)
        if config is None or config.kind == "stdio":
            raise McpError(_no_remote(name))
        try:
            said = OAuth(name, expand(config.url, "url"), config.oauth, lambda text: None,
                         allow_insecure=config.allow_insecure).logout()
        except (AuthError, UnsetVariable) as e:
            raise ServerError(str(e), name) from None
        self._forget(name)
        with self._lock:
            self._statuses[name] = McpStatus(name, [], f"logged out (/mcp login {name} to log in again)",
                                             needs_login=True)
        return said


def _no_remote(name: str) -> str:
    """What /mcp login or logout says for a name no usable remote server has."""
    return f"no remote server named {name} in the folder's .geekagent/mcp.json or your own mcp.json (/mcp lists them)"
