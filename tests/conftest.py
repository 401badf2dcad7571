"""Hypothesis settings profiles for the test suite.

``ci`` (the default) keeps the whole suite fast; select another with
``--hypothesis-profile=thorough`` for a longer local run. The ``codec_path``
fixture runs a codec test module on both codec paths (pure, accelerated).
"""

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from a2a_models import codec

settings.register_profile(
    "ci",
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=500,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")


# --------------------------------------------------------------------------- codec paths

#: Set by scripts/test.sh (which builds it): the compiled accelerator must be there.
REQUIRE_ACCEL = os.environ.get("A2A_REQUIRE_ACCEL") == "1"


@pytest.fixture(scope="module", params=["pure", "accelerated"])
def codec_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a codec test module twice: pure Python, then with the compiled accelerator.

    Modules opt in with ``pytestmark = pytest.mark.usefixtures("codec_path")``.
    The accelerated run skips when the accelerator is not built, unless
    ``A2A_REQUIRE_ACCEL=1`` (then it fails).
    """
    saved = os.environ.get("A2A_CODEC_PURE")
    os.environ["A2A_CODEC_PURE"] = "1" if request.param == "pure" else "0"
    codec._reset()
    try:
        if request.param == "accelerated" and not codec.accelerated():
            if REQUIRE_ACCEL:
                pytest.fail("A2A_REQUIRE_ACCEL=1 but the codec accelerator is not built")
            pytest.skip("the codec accelerator is not built (python scripts/build_accel.py)")
        yield request.param
    finally:
        if saved is None:
            os.environ.pop("A2A_CODEC_PURE", None)
        else:
            os.environ["A2A_CODEC_PURE"] = saved
        codec._reset()
