# The two commands a reader needs: `make run` and `make test`. Only python3 and make are assumed.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

.PHONY: run test clean

run:
	$(PYTHON) day15/index.py

# pytest is the only test dependency; it goes into .venv the first time.
test: $(VENV)/.pytest-installed
	$(VPY) -m pytest -q tests

$(VENV)/.pytest-installed:
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check pytest
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache
