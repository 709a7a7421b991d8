"""Beyond the tutorial: what the trust question (folder/trust.py) shows of each entry of a folder's mcp.json.

The exact command line (every argument, control characters made visible) or the URL; where each
variable of the user's environment goes, never its value; the roots outside the project folder; what
a login without a person reads and where the ID token goes.
"""
import os
import shlex

from beyond.client.config import ServerConfig, expanded
from beyond.client.roots import outside
from beyond.dirs import VARIABLE, only_variables
from beyond.secrets import is_secret_name, mask, masked_entry, places
from beyond.text import clean, shorten
from beyond.wire.sandbox import what_it_may


# What the question says of an entry that is configured and not started.
DISABLED = "disabled (not started)"


def shown_value(key: str, value: str, limit: int) -> str:
    """A setting's value as the question shows it: what is secret where it stands, masked."""
    return shorten(masked_entry({"env": {key: value}})["env"][key], limit)


def what_runs(config: ServerConfig, folder: str | None = None) -> str:
    """The exact command line (every argument, control characters made visible) or the URL, where each
    variable of the user's environment goes (`GH_TOKEN <- ${OPENAI_API_KEY}`), never its value, which
    secrets its command line would show every process, and the roots it would get outside the project `folder`."""
    if config.problem:
        return f"not started: {clean(config.problem, one_line=True)}"
    if config.disabled:
        return DISABLED
    sends = [f"{where} <- {', '.join(found)}" for where, value in expanded(config)
             if (found := [m.group(0) for m in VARIABLE.finditer(value)])]
    sends = f"; from your environment: {', '.join(sends)}" if sends else ""
    wider = outside(config, folder) if folder else []
    sends += f"; given folders outside this one: {', '.join(wider)}" if wider else ""
    shown = masked_entry({"args": config.args, "url": config.url, "env": config.env}, keep=only_variables)
    if config.kind != "stdio":
        headers = f" with headers {', '.join(config.headers)}" if config.headers else ""
        return clean(mask(f"connects to {shown['url']}{headers}{sends}{_logs_in(config.oauth)}"), one_line=True)
    where = f" in {config.cwd}" if config.cwd else ""
    env = ", ".join(f"{key}={shorten(shown['env'][key], 80)}" for key, value in config.env.items()
                    if not VARIABLE.search(value))
    env = f" with env {env}" if env else ""  # LD_PRELOAD=./x.so changes what runs as much as the command
    confined = f"; {what_it_may(config)}" if config.sandbox is not None else ""
    seen = "".join(f"; {what} is visible to every process on this machine: pass it in env"
                   for what in _in_args(config))
    return clean(mask(f"runs {shlex.join([config.command, *shown['args']])}{where}{env}{sends}{seen}{confined}"),
                 one_line=True)


def _in_args(config: ServerConfig) -> list[str]:
    """The secrets a server's command line would hold, which any process here can read in /proc: each
    ${VAR} that names one or brings a value the secrets inventory knows, and each written there by place."""
    names = [match.group(1) for arg in config.args for match in VARIABLE.finditer(arg)]
    values = {name: os.environ.get(name, "") for name in names}
    found = [f"{name} in args" for name in names if is_secret_name(name) or mask(values[name]) != values[name]]
    return list(dict.fromkeys(found + [place.where for place in places({"args": config.args})
                                       if not only_variables(place.value)]))


def _logs_in(oauth: dict) -> str:
    """What a login without a person does (auth/grants.py): the grant, the files it reads, where the ID token goes."""
    said = [f"logs in without you ({oauth['grant']})"] if isinstance(oauth.get("grant"), str) else []
    said += [f"reads {oauth[key]}" for key in ("assertionFile", "privateKeyFile") if isinstance(oauth.get(key), str)]
    if isinstance(oauth.get("idpTokenEndpoint"), str):
        said.append(f"sends your ID token to {oauth['idpTokenEndpoint']}")
    return "".join(f"; {s}" for s in said)
