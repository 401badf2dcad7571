"""Developer tasks: ``nox`` runs tests, typecheck and lint; ``nox -s <session>`` one of them.

* ``tests``     - the full pytest suite, with every extra installed (``-- <pytest args>``)
* ``typecheck`` - ``mypy --strict`` on ``src`` (configured by ``[tool.mypy]`` in pyproject)
* ``lint``      - ``ruff check`` and ``ruff format --check``
* ``docs``      - build the documentation site (mkdocs, strict: a broken link or reference fails)
* ``schemas``   - regenerate the committed JSON Schemas in ``spec/json``
* ``protos``    - regenerate the committed protobuf/gRPC modules of the gRPC adapter (1.0 and 0.3)
* ``bench``     - run every ``bench/*.py`` script

The contract tests need the A2A spec checkout at ``../shared/a2a-spec``.
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests", "typecheck", "lint"]

ROOT = Path(__file__).parent
ALL_EXTRAS = "-e.[dev,http,postgres,mcp,llm,grpc]"
#: The editable install also compiles the optional codec accelerator (hatch_build.py).
ACCEL = {"A2A_BUILD_ACCEL": "1"}


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (pass pytest arguments after ``--``), with the codec accelerator built."""
    session.install(ALL_EXTRAS, env=ACCEL)
    session.run(
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",  # pytest-xdist, as scripts/test.sh
        "auto",
        "--dist",
        "worksteal",
        *session.posargs,
        env={"A2A_REQUIRE_ACCEL": "1"},
    )


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the package; options come from [tool.mypy] in pyproject.toml."""
    session.install(ALL_EXTRAS)
    session.run("python", "-m", "mypy", "--strict", *(session.posargs or ["src/a2a_models"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check (configured by [tool.ruff] in pyproject.toml)."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", *(session.posargs or ["."]))
    session.run("ruff", "format", "--check", *(session.posargs or ["."]))


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site into ``site/`` in strict mode (``-- serve`` to preview it)."""
    session.install("-e.[docs,http,postgres,mcp,llm]")
    command = session.posargs or ["build", "--strict"]
    session.run("mkdocs", *command, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def schemas(session: nox.Session) -> None:
    """Regenerate spec/json/a2a-{1.0,0.3,0.3-http}.schema.json from the models and codec."""
    session.install("-e.")
    session.run("python", "-m", "a2a_models.schema", str(ROOT / "spec" / "json"))


@nox.session
def protos(session: nox.Session) -> None:
    """Regenerate adapters/grpc/_pb from ../shared/a2a-spec/{1.0.1,0.3.0}/a2a.proto (grpcio-tools)."""
    session.install("-e.[grpc]", "grpcio-tools>=1.85.1")
    for version in ("1.0.1", "0.3.0"):
        proto = ROOT.parent / "shared" / "a2a-spec" / version / "a2a.proto"
        session.run("python", "-m", "a2a_models.adapters.grpc._protoc", str(proto))


@nox.session
def bench(session: nox.Session) -> None:
    """Run every benchmark script in bench/ (in name order)."""
    scripts = sorted((ROOT / "bench").glob("*.py"))
    if not scripts:
        session.skip("no bench/*.py scripts")
    session.install(ALL_EXTRAS, env=ACCEL)
    for script in scripts:
        session.log(f"--- {script.relative_to(ROOT)}")
        session.run("python", str(script), *session.posargs)
