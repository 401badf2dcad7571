"""``import a2a_models`` is cheap: nothing heavy, and the data layer loads what it uses.

Run in fresh interpreters (``sys.modules`` of this test process is full of
everything the other tests imported). Timing is not asserted here (timed tests
flake on a loaded machine); ``bench/codec.py --import-time`` measures it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import a2a_models

#: Never pulled in by the package root nor by the codec's steady state.
ADAPTER_DEPENDENCIES = (
    "starlette",
    "uvicorn",
    "httpx",
    "httpx_sse",
    "sse_starlette",
    "psycopg",
    "asyncpg",
    "redis",
    "mcp",
    "openai",
    "anthropic",
    "grpc",
    "opentelemetry",
    "rich",
    "pydantic",
    "google",
    "a2a",
    "cattrs",
)


def _loaded_after(code: str) -> dict[str, list[str]]:
    script = (
        "import sys, json\n"
        f"{code}\n"
        "print(json.dumps({'heavy': sorted(m for m in sys.modules"
        f" if m.split('.')[0] in {ADAPTER_DEPENDENCIES!r}),"
        " 'ours': sorted(m for m in sys.modules if m.startswith('a2a_models'))}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, list[str]] = json.loads(out)
    return result


def test_bare_import_loads_nothing_but_the_package() -> None:
    loaded = _loaded_after("import a2a_models")
    assert loaded == {"heavy": [], "ours": ["a2a_models"]}


@pytest.mark.parametrize(
    "code",
    [
        "from a2a_models import Task, Message",
        "from a2a_models import codec, Message\ncodec.encode(Message.user('hi'))",
        # Every dialect's steady state: decode and encode, strict and lenient.
        "from a2a_models import codec, Message\n"
        "for d in ('1.0', '0.3', '0.3-http', 'python'):\n"
        "    w = codec.to_wire(Message.user('hi'), d)\n"
        "    codec.from_wire(Message, w, d, strict=True)\n"
        "    codec.decode(Message, codec.encode(Message.user('hi'), '1.0'))",
    ],
)
def test_models_and_codec_pull_in_no_adapter_dependency(code: str) -> None:
    assert _loaded_after(code)["heavy"] == []


def test_models_alone_do_not_load_the_codec() -> None:
    ours = _loaded_after("from a2a_models import Task, AgentCard, DecodeError")["ours"]
    assert "a2a_models.models" in ours and "a2a_models.errors" in ours
    assert not [m for m in ours if m.startswith("a2a_models.codec")]


def test_cattrs_converter_still_works_on_demand() -> None:
    """cattrs is loaded by get_converter, the one place that needs it."""
    loaded = _loaded_after(
        "from a2a_models import codec, Message\n"
        "conv = codec.get_converter('1.0')\n"
        "msg = Message.user('hi')\n"
        "assert conv.structure(conv.unstructure(msg), Message) == msg"
    )
    assert {m.split(".")[0] for m in loaded["heavy"]} == {"cattrs"}


def test_every_public_name_resolves_lazily_and_is_listed() -> None:
    listed = dir(a2a_models)
    for name in a2a_models.__all__:
        assert name in listed
        assert getattr(a2a_models, name) is not None, name
    assert a2a_models.Task is a2a_models.models.Task
    assert a2a_models.DecodeError is a2a_models.errors.DecodeError
    with pytest.raises(AttributeError, match="no attribute 'Tsak'"):
        _ = a2a_models.Tsak  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from a2a_models import Tsak", {})


def test_codec_compiles_a_class_on_first_use_only() -> None:
    """A dialect's ~40 classes are compiled when first needed, not all at once."""
    script = (
        "from a2a_models import codec, Message, Task\n"
        "from a2a_models.codec._converters import get_namespace\n"
        "ns = get_namespace(codec.Dialect('1.0'), False)\n"
        "lazy = lambda name: hasattr(ns[name], 'a2a_build')\n"
        "before = lazy('_s_Message'), lazy('_s_Task')\n"
        "msg = codec.decode(Message, codec.encode(Message.user('hi')))\n"
        "after = lazy('_s_Message'), lazy('_u_Message'), lazy('_s_Task'), lazy('_s_AgentCard')\n"
        "cached = [hasattr(f, 'a2a_build') for f in codec._DECODERS.values()]\n"
        "print(before, after, cached)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "(True, True) (False, False, True, True) [False]"
