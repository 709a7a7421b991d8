"""Beyond the tutorial: what the trust question (folder/trust.py) shows: the folder's entries, .env settings,
tools allowed unasked and skills (summary), and of each entry of its mcp.json (what_runs):

The exact command line (every argument, control characters made visible) or the URL; where each
variable of the user's environment goes, never its value; the roots outside the project folder; what
a login without a person reads and where the ID token goes.
"""
import os
import re
import shlex

import permissions

from beyond.client.config import MCP_CONFIG_PATH, ServerConfig, expanded
from beyond.client.roots import outside
from beyond.dirs import VARIABLE, only_variables
from beyond.folder.skill_files import shown_skills
from beyond.secrets import is_secret_name, mask, masked_entry, places
from beyond.text import clean, shorten
from beyond.wire.sandbox import what_it_may
from mcp import McpError


# What the question says of an entry that is configured and not started.
DISABLED = "disabled (not started)"
# .env keys that change how this agent and the servers it starts run (which programs run, what they
# load, which certificates and proxies they trust, where they write): set apart in the question.
RUNTIME_SETTING = re.compile(r"PATH|LD_.*|DYLD_.*|PYTHON.*|NODE_.*|NPM_CONFIG_.*|SSL_.*|.*_PROXY|.*_CA_BUNDLE|TMPDIR|"
                             r"TMP|TEMP|HOME|SHELL|BASH_ENV|ENV|IFS|GIT_.*|PERL.*|RUBY.*|XDG_.*|GEEKAGENT_.*", re.I)


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


def summary(project, new: list[str] | tuple = ()) -> list[str]:
    """What trusting the folder (a Project of trust.py) would do, from the entries as parsed for starting them
    (`new`: the tools GeekAgent.json allows since the folder was last trusted)."""
    lines = [f"This folder has its own agent configuration: {clean(project.folder, one_line=True)}"]
    try:
        for name, runs in project.entries().items():
            lines.append(f"  server {clean(shorten(name, 80), one_line=True)}: {runs}")
    except McpError as e:
        lines.append(f"  {MCP_CONFIG_PATH} cannot be used, so none of its servers starts: "
                     f"{clean(str(e), one_line=True)}")
    settings, warnings = project.dotenv()
    lines += [f"  warning: {clean(w, one_line=True)}" for w in warnings]
    for key, value in sorted(settings.items(), key=lambda kv: bool(RUNTIME_SETTING.fullmatch(kv[0]))):
        what = "changes how programs run: " if RUNTIME_SETTING.fullmatch(key) else ""
        value = shown_value(key, value, 200)
        unused = " (not used: set in your environment)" if key in os.environ else ""
        lines.append(f"  .env {what or 'sets '}{clean(mask(f'{key}={value}'), one_line=True)}{unused}")
    lines += shown_skills(project.skills, project.skill_problems)
    if project.allows():
        lines.append(f"  {permissions.POLICY_PATH} lets these tools run without asking: " + _names(project.allows())
                     + (f" (new since you trusted it: {_names(new)})" if new else ""))
    return lines


def _names(names: list[str]) -> str:
    return ", ".join(clean(shorten(name, 80), one_line=True) for name in names)
