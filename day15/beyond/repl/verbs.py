"""Beyond the tutorial: what the `mcp` verbs share (manage.py, validate.py, imports.py): their two failures
and the reading of their command lines.
"""
import re

from beyond.dirs import VARIABLE
from beyond.text import SECRET_NAME

# A server's name: what tool names are made of, so it reads the same in every message.
NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Headers that carry a credential whatever their name says, and the scheme words that come before one.
SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie")
AUTH_SCHEME = re.compile(r"^\s*(Bearer|Basic|Token|DPoP)\b", re.IGNORECASE)


class Refused(Exception):
    """What the user asked cannot be done as asked: exit 1, with the message."""


class Usage(Exception):
    """The command line is not one of the verbs': exit 2, with the usage."""


def flag(args: list[str], wanted: str) -> bool:
    """Whether `wanted` is given (taken out of args)."""
    if wanted in args:
        args.remove(wanted)
        return True
    return False


def value(args: list[str], option: str) -> str | None:
    """The value after `option` (both taken out of args), or None."""
    if option not in args:
        return None
    at = args.index(option)
    if at + 1 >= len(args):
        raise Usage(f"{option} needs a value")
    given = args[at + 1]
    del args[at:at + 2]
    return given


def pairs(args: list[str], option: str) -> dict[str, str]:
    """Every KEY=VALUE given after `option`."""
    found = {}
    while (pair := value(args, option)) is not None:
        key, sep, given = pair.partition("=")
        if not sep or not key:
            raise Usage(f"{option} takes KEY=VALUE, not {pair!r}")
        found[key] = given
    return found


def name_of(args: list[str]) -> str:
    """The first word that is no option: a server's name, checked (taken out of args)."""
    names = [arg for arg in args if not arg.startswith("-")]
    if not names:
        raise Usage("a server's NAME is needed")
    if not NAME.fullmatch(names[0]):
        raise Usage(f"{names[0]!r} is no server name: letters, digits, '_', '.' and '-', at most 64")
    args.remove(names[0])
    return names[0]


def no_more(args: list[str]) -> None:
    if args:
        raise Usage(f"unexpected {args[0]!r}")


def secret_literal(key: object, value: object) -> bool:
    """A value written out that its name says is a secret; what a ${VAR} brings is no secret of the file's (the
    environment holds it), and neither is the scheme before it (`Bearer ${TOKEN}`)."""
    named = isinstance(key, str) and (SECRET_NAME.search(key) or key.lower() in SECRET_HEADERS)
    return bool(named) and isinstance(value, str) and bool(AUTH_SCHEME.sub("", VARIABLE.sub("", value)).strip())
