"""A real server of the skills extension (io.modelcontextprotocol/skills, SEP-2640) for `make interop`:
FastMCP 4.1.4 (from PyPI, installed into .interop/fastmcp/). It serves every skill folder of a root
(`<root>/<name>/SKILL.md` plus its supporting files), over stdio, or over Streamable HTTP at
http://127.0.0.1:PORT/mcp with `--http PORT`. FastMCP answers skills/list and skills/get only at
protocol 2026-07-28 (server/discover and per-request _meta); an initialize session gets "method not found".

    fastmcp_skills_server.py <skills-root> [--http PORT]"""
import sys

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension

root, rest = sys.argv[1], sys.argv[2:]

mcp = FastMCP("skills")
# experimental_skills switches the provider to SEP-2640: strict manifests (sha256 digest and size of every
# file), frontmatter checked against the Agent Skills rules (a skill that fails is left out), and byte-exact
# reads. "resources" lists supporting files as resources too, not only behind a template.
skills = SkillsDirectoryProvider(root, supporting_files="resources", experimental_skills=True)
# The provider must be on the server before the extension that publishes it.
mcp.add_provider(skills)
mcp.add_extension(SkillsExtension(providers=[skills]))

if __name__ == "__main__":
    if rest[:1] == ["--http"]:
        mcp.run(transport="http", host="127.0.0.1", port=int(rest[1]), path="/mcp", show_banner=False)
    else:
        mcp.run(show_banner=False)
