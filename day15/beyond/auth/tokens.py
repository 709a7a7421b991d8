"""Beyond the tutorial: the OAuth logins of remote servers, kept in one file of the user's state.

$XDG_STATE_HOME/geekagent/oauth.json (never the project folder): per authorization server (its
issuer) the client this agent registered there, and per server URL and issuer the tokens. The file
is the user's alone (mode 0600), changed as every state file is (dirs.StateFile: under a lock other
agent processes take too, on the file as read under it, replaced whole, never through a link), so two
agents never use one rotated refresh token twice and each sees a login the other made.
"""
import contextlib
import os
import time

from beyond import secrets
from beyond.dirs import StateError, StateFile, state_dir
from beyond.auth.errors import AuthError

# A token's lifetime is believed up to this long (real ones are hours or days).
MAX_LIFE_S = 10 * 365 * 24 * 3600.0

def lifetime(value: object) -> float | None:
    """A token's expires_in as seconds when it is a plausible one (above 0, at most MAX_LIFE_S), else None: unknown."""
    plausible = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_LIFE_S
    return float(value) if plausible else None


def usable(tokens: object) -> bool:
    """Tokens as read back from the logins file (written by any agent, or by hand) that every use of them can take."""
    if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
        return False
    scopes, expires = tokens.get("scopes", []), tokens.get("expires_at")
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        return False
    return expires is None or (isinstance(expires, (int, float)) and not isinstance(expires, bool)
                               and 0 < expires < time.time() + 2 * MAX_LIFE_S)


class TokenStore:
    """The logins file, a StateFile (dirs.py): every read or change goes through locked(), which yields
    the data as it is on disk; what the block leaves in it is written back when it changed. A block inside
    another (of the same thread) shares its data: a refresh reads, asks and writes under one lock."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or state_dir()
        self.path = os.path.join(self.folder, "oauth.json")
        self._file = StateFile(self.path)

    @contextlib.contextmanager
    def locked(self):
        try:
            with self._file.locked() as data:
                hand_in(data)  # a login another agent made is masked too
                yield data
                hand_in(data)  # and what this block keeps (a login, a refresh, a registration)
        except StateError as e:  # a link, another user's file, one others may read, or one too big
            raise AuthError(str(e)) from None


# The fields of the logins file that hold a secret: a server's tokens, a registration's secret.
SECRET_FIELDS = ("access_token", "refresh_token", "client_secret")


def hand_in(data: object, where: tuple = ()) -> None:
    """Every token and client secret in the logins file's data (nested a few levels), to the secrets: a
    server's tokens as what is replaced at each refresh (each kind of each server apart)."""
    if isinstance(data, dict) and len(where) < 4:
        for key, value in data.items():
            if key in SECRET_FIELDS:
                secrets.add(value, key, rotating=None if key == "client_secret" else "/".join((*where, key)),
                            issued=True)
            else:
                hand_in(value, (*where, str(key)))
