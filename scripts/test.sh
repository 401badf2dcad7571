#!/usr/bin/env bash
# Set up a fresh virtualenv with every extra and run the full test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,http,postgres,mcp,llm]'
# PostgreSQL runs on every machine, CI's included: its tests must never skip.
export A2A_REQUIRE_POSTGRES=1
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
