"""Beyond the tutorial: resources and prompts, which tutorial sections 3.1 and 6 leave out.

Commands of the full agent's REPL: /resources and /read show what servers offer as context;
@server:uri in a message attaches a resource's text to it; /prompts and /prompt use a server's
prompt templates as the next turn. Reading by hand is the user's own act and does not ask; the
model reads through mcp_<server>_read_resource (servers/registry.py), which asks like any tool.
"""
import re

from beyond.secrets import mask
from beyond.terminal import shown
from mcp import McpError
from tools import MAX_RESULT_CHARS, cut

# @server:uri in a chat message, as other agents do @-mentions.
MENTION = re.compile(r"@([A-Za-z0-9_.-]+):(\S+)")


def clients(session) -> dict:
    """The running full clients by server name (the tutorial's client has none of this)."""
    return {s.server: s.client for s in session.servers.mcp_statuses() if s.client}


def cmd_resources(session, arg: str) -> None:
    """[server]: the resources and resource templates servers offer"""
    for server, client in offering(session, arg, "resources"):
        try:
            items = [f"  {r.get('uri')}  {r.get('name', '')}" for r in client.list_resources()]
            items += [f"  {t.get('uriTemplate')}  (template) {t.get('name', '')}"
                      for t in client.list_resource_templates()]
        except McpError as e:
            items = [f"  error: {e}"]
        print(shown(f"{server} ({len(items)})\n" + "\n".join(items)))


def offering(session, arg: str, what: str) -> list[tuple]:
    """(server, client) of the servers (or the one named `arg`) that offer `what`; none is said so."""
    found = [(server, c) for server, c in clients(session).items() if arg in ("", server) and what in c.capabilities]
    if not found:
        print(f"(no server{' named ' + shown(arg, one_line=True) if arg else ''} offers {what})")
    return found


def cmd_read(session, arg: str) -> None:
    """<server> <uri>: show one resource"""
    server, _, uri = arg.partition(" ")
    client = clients(session).get(server)
    if client is None or not uri.strip():
        print("usage: /read <server> <uri>; /resources lists them")
        return
    try:
        print(shown(client.read_resource(uri.strip())))
    except McpError as e:
        print(shown(f"error: {e}", one_line=True))


def mentions(session) -> list[str]:
    """What Tab completes after @: each server that listed resources, and each of its resources (not templates)."""
    words = []
    for server, client in clients(session).items():
        words += [f"@{server}:"] * bool(client.listed)
        # Not templates, and nothing readline would print raw: no space, control or invisible character.
        words += [f"@{server}:{uri}" for uri in client.listed
                  if "{" not in uri and uri.isprintable() and " " not in uri]
    return words


def attach_mentions(session, text: str) -> str:
    """The message with the text of every @server:uri it names appended (cut at the tool-result limit)."""
    running = clients(session)
    attached = []
    for server, uri in MENTION.findall(text):
        if server in running:
            try:
                content = mask(running[server].read_resource(uri))  # the server's words, to the model
                attached.append(f"\n\n[resource {server}:{uri}]\n{cut(content, MAX_RESULT_CHARS)}")
                print(shown(f"(attached @{server}:{uri}, {len(content):,} characters)", one_line=True))
            except McpError as e:
                print(shown(f"could not attach @{server}:{uri}: {e}", one_line=True))
    return text + "".join(attached)


def cmd_prompts(session, arg: str) -> None:
    """[server]: the prompts servers offer, with their arguments"""
    for server, client in offering(session, arg, "prompts"):
        try:
            lines = [f"  {p.get('name')}{_arguments(p)}  {p.get('description', '')}" for p in client.list_prompts()]
        except McpError as e:
            lines = [f"  error: {e}"]
        print(shown(f"{server} ({len(lines)})\n" + "\n".join(lines)))


def prompt_turn(session, arg: str) -> str | None:
    """/prompt <server> <name> [key=value ...]: the prompt's text, to send as the next turn; None if not."""
    words = arg.split()
    client = clients(session).get(words[0]) if words else None
    if client is None or len(words) < 2:
        print("usage: /prompt <server> <name> [key=value ...]; /prompts lists them")
        return None
    values = dict(word.partition("=")[::2] for word in words[2:])
    try:
        prompt = next((p for p in client.list_prompts() if p.get("name") == words[1]), None)
        if prompt is None:
            print(shown(f"{words[0]} has no prompt {words[1]}; /prompts lists them", one_line=True))
            return None
        missing = [a["name"] for a in prompt.get("arguments") or []
                   if a.get("required") and a.get("name") not in values]
        if missing:
            print(shown(f"usage: /prompt {words[0]} {words[1]}{_arguments(prompt)} (missing: {', '.join(missing)})"))
            return None
        messages = client.get_prompt(words[1], values)
    except McpError as e:
        print(shown(f"error: {e}", one_line=True))
        return None
    return mask("\n\n".join(m["text"] for m in messages))  # a server's words, sent to the model as the user's


def cmd_prompt(session, arg: str) -> None:
    """<server> <name> [key=value ...]: send a server's prompt as the next message"""
    text = prompt_turn(session, arg)
    if text:
        session.chat(text, typed=False)


def _arguments(prompt: dict) -> str:
    args = [a for a in prompt.get("arguments") or [] if isinstance(a, dict)]
    return "".join(f" {a.get('name')}=..." if a.get("required") else f" [{a.get('name')}=...]" for a in args)
