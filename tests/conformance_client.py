"""The client command `make conformance` hands the official MCP conformance suite (tests/conformance.py).

It only maps a scenario to calls of the public full client: McpClient(name, entry).start(login=True),
call_tool, list_skills, load_skill, read_skill_file, stop.
The suite appends the server URL and sets MCP_CONFORMANCE_SCENARIO,
MCP_CONFORMANCE_CONTEXT (JSON: client credentials, the calls to make) and
MCP_CONFORMANCE_PROTOCOL_VERSION (the entry's "protocol": the handshake up to 2025-11-25;
CONFORMANCE_PROTOCOL, if set, instead: "auto" lets the client find the revision itself). The
suite's authorization server answers the authorization URL at once with a redirect; BROWSER points
at conformance_browser.py, which follows it to our own callback, as a person's browser would.
"""
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "day15"))

import beyond_mcp  # noqa: E402  (after the path insert)


# The scenarios of a login without a person, and the entry's "oauth" for each, from the suite's context.
GRANTS = {
    "auth/client-credentials-basic": lambda c: {"grant": "client_credentials", "clientId": c["client_id"],
                                                "clientSecret": c["client_secret"]},
    "auth/wif-jwt-bearer": lambda c: {"grant": "jwt_bearer", "clientId": c["client_id"], "assertion": c["valid_jwt"]},
    "auth/client-credentials-jwt": lambda c: {"grant": "client_credentials", "clientId": c["client_id"],
                                              "privateKeyFile": key_file(c["private_key_pem"])},
    "auth/enterprise-managed-authorization": lambda c: {
        "grant": "enterprise", "clientId": c["client_id"], "clientSecret": c["client_secret"],
        "idpTokenEndpoint": c["idp_token_endpoint"], "idpClientId": c["idp_client_id"], "idToken": c["idp_id_token"]},
}


def key_file(pem: str) -> str:
    """The suite's private key as a file of the client's own (0600, in the scenario's own folder)."""
    fd = os.open("client-key.pem", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(pem)
    return os.path.abspath("client-key.pem")


def entry(url: str, scenario: str, context: dict) -> dict:
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    config = {"url": url, "type": "http", "timeout": 20, "startupTimeout": 20, "elicitation": "defaults",
              "protocol": os.environ.get("CONFORMANCE_PROTOCOL") or ("2026-07-28" if version >= "2026" else "legacy")}
    if scenario.startswith("auth/"):
        if scenario in GRANTS:  # a login without a person: the grant, from the suite's context
            config["oauth"] = GRANTS[scenario](context)
        elif context.get("client_id"):
            config["oauth"] = {"clientId": context["client_id"]}
            if context.get("client_secret"):
                config["oauth"]["clientSecret"] = context["client_secret"]
        else:
            config["oauth"] = {"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
    return config


def calls(scenario: str, tools: list[dict], context: dict) -> list[tuple[str, dict]]:
    """The tool calls a scenario expects after the tools are listed."""
    names = [t.get("name") for t in tools]
    if scenario == "tools_call":
        return [("add_numbers", {"a": 2, "b": 3})]
    if scenario == "http-custom-headers":
        return [(c["name"], c.get("arguments", {})) for c in context.get("toolCalls", [])]
    if scenario == "http-invalid-tool-headers":
        return [("valid_tool", {"region": "us-west1"})] + [(n, {}) for n in names if str(n).startswith("invalid_")]
    if scenario in ("http-standard-headers",) or scenario.startswith("auth/"):
        return [(names[0], {})] if names else []
    if scenario == "json-schema-2020-12-preservation":  # the focal tool's inputSchema, as the client kept it
        focal = next((t for t in tools if t.get("name") == "json_schema_2020_12_tool"), {})
        return [("json_schema_echo", {"schema": focal.get("inputSchema", {})})]
    if scenario == "sse-retry":
        return [("test_reconnection", {})]
    if scenario == "elicitation-sep1034-client-defaults":
        return [("test_client_elicitation_defaults", {})]
    if scenario == "sep-2322-client-request-state":
        return [(n, {}) for n in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
                                  "test_mrtr_no_result_type") if n in names]
    return []


# The skills extension's scenarios (SEP-2640): list the skills; load the suite's one skill, and read its
# supporting file only if the load passed every check (a tampered SKILL.md must stop it before that).
SKILL = "skill://pdf-processing/SKILL.md"


def skills(client, scenario: str) -> None:
    listed = client.list_skills()
    print("skills:", [entry.uri for entry in listed], client.skill_problems)
    if scenario == "sep-2640-client-no-prefetch":
        return
    try:
        print("loaded:", client.load_skill(SKILL)[:80])
    except beyond_mcp.McpError as e:
        print("not loaded:", e)
        return
    print("file:", client.read_skill_file(SKILL, "references/FORMS.md")[:80])


def main() -> int:
    url, scenario = sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    client = beyond_mcp.McpClient("conformance", entry(url, scenario, context))
    try:
        tools = client.start(login=True)
        if scenario == "http-standard-headers":
            for step in (client.list_resources, client.list_prompts):
                step()
            client.read_resource("file:///path/to/file%20name.txt")
        if scenario.startswith("sep-2640-client-"):
            skills(client, scenario)
        for name, arguments in calls(scenario, tools, context):
            try:
                # As the agent calls (beyond/servers/registry.py): asking for progress.
                said = client.call_tool(name, arguments, on_progress=lambda text: print("progress:", text))
                print(name, "->", said[:200])
            except beyond_mcp.McpError as e:
                print(name, "failed:", e)
    except beyond_mcp.McpError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        client.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
