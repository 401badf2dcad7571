"""Hypothesis settings profiles for the test suite.

``ci`` (the default) keeps the whole suite fast; select another with
``--hypothesis-profile=thorough`` for a longer local run.
"""

from hypothesis import HealthCheck, settings

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
