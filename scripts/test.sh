#!/usr/bin/env bash
# Set up a fresh virtualenv with every extra, then run the gates CI enforces:
# mypy --strict on src (every import declared in an extra; local stubs in typings/),
# ruff check and ruff format --check, and the full test suite (the codec's on both paths:
# pure Python and the compiled accelerator).
# Pass pytest arguments after the script name; A2A_SKIP_STATIC=1 runs the tests only.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# A2A_BUILD_ACCEL=1: the editable install also compiles the optional codec accelerator
# (hatch_build.py), and A2A_REQUIRE_ACCEL=1 makes its tests fail rather than skip without it.
A2A_BUILD_ACCEL=1 .venv/bin/python -m pip install -q -e '.[dev,http,postgres,mcp,llm,grpc]'
export A2A_REQUIRE_ACCEL=1
# The official a2a-sdk 0.3.x, for tests/interop/sdk03 (its scripts run there as the peers of
# our server and client): it cannot share .venv, whose a2a-sdk is 1.x. About 10 s from PyPI.
python3 -m venv .venv-a2a03
.venv-a2a03/bin/python -m pip install -q -r tests/interop/sdk03/requirements.txt
export A2A_REQUIRE_SDK03=1
if [[ "${A2A_SKIP_STATIC:-0}" != "1" ]]; then
    # Configured by [tool.mypy] (strict, mypy_path = typings) and [tool.ruff] in pyproject.toml.
    .venv/bin/python -m mypy --strict src/a2a_models
    .venv/bin/python -m ruff check .
    .venv/bin/python -m ruff format --check .
fi
# PostgreSQL runs on every machine, CI's included: its tests must never skip.
export A2A_REQUIRE_POSTGRES=1
# pytest-xdist (the dev extra): one worker per core (A2A_TEST_WORKERS overrides, 0 runs
# in this process); worksteal keeps each worker on a contiguous run of the tests (a
# module's fixtures are made once per worker) and lets an idle worker take the rest.
.venv/bin/python -m pytest -q -p no:cacheprovider -n "${A2A_TEST_WORKERS:-auto}" --dist worksteal "$@"
