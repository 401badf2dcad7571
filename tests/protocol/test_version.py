"""A2A-Version header negotiation (spec §3.6)."""

from __future__ import annotations

import pytest

from a2a_models.errors import VersionNotSupportedError
from a2a_models.protocol import SUPPORTED_VERSIONS, negotiate_version, normalize_version


@pytest.mark.parametrize("header", [None, "", "   ", "\t"])
def test_missing_or_empty_header_means_0_3(header: str | None) -> None:
    assert negotiate_version(header) == "0.3"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("1.0", "1.0"),
        ("0.3", "0.3"),
        (" 1.0 ", "1.0"),
        ("1", "1.0"),
        ("1.0.1", "1.0"),
        ("1.0.0", "1.0"),
        ("0.3.0", "0.3"),
        ("01.00", "1.0"),
    ],
)
def test_supported_versions(header: str, expected: str) -> None:
    assert negotiate_version(header) == expected


@pytest.mark.parametrize(
    "header",
    ["2.0", "1.1", "0.2", "0.2.6", "0", "0.3.0.1", "v1.0", "1.0-rc", "latest", "1.0,0.3", "1.x"],
)
def test_unsupported_versions(header: str) -> None:
    with pytest.raises(VersionNotSupportedError) as info:
        negotiate_version(header)
    err = info.value
    assert err.code == -32009
    assert "1.0" in err.message and "0.3" in err.message  # names the supported versions


def test_restricted_support() -> None:
    assert negotiate_version("1.0", supported=("1.0",)) == "1.0"
    with pytest.raises(VersionNotSupportedError, match=r"Supported versions: 1\.0$"):
        negotiate_version("0.3", supported=("1.0",))
    with pytest.raises(VersionNotSupportedError, match="missing or empty"):
        negotiate_version(None, supported=("1.0",))


def test_huge_header_is_truncated_in_the_message() -> None:
    with pytest.raises(VersionNotSupportedError) as info:
        negotiate_version("x" * 100_000)
    assert len(info.value.message) < 300


def test_normalize_version() -> None:
    from a2a_models.codec import Dialect

    assert SUPPORTED_VERSIONS == ("1.0", "0.3")
    assert normalize_version("1.0") == "1.0"
    assert normalize_version(Dialect.V0_3) == "0.3"
    for bad in ("1", "0.3.0", "0.3-http", "python", ""):
        with pytest.raises(VersionNotSupportedError):
            normalize_version(bad)


@pytest.mark.parametrize(("header", "expected"), [("1.0, 1.0", "1.0"), ("0.3,0.3.0", "0.3")])
def test_a_header_given_twice_with_one_version_is_read(header: str, expected: str) -> None:
    # Before: the joined value was "Invalid A2A-Version '1.0, 1.0'".
    assert negotiate_version(header) == expected


def test_a_header_given_twice_with_two_versions_says_so() -> None:
    with pytest.raises(VersionNotSupportedError, match="given more than once, naming different"):
        negotiate_version("1.0, 0.3")
    with pytest.raises(VersionNotSupportedError, match="not supported"):
        negotiate_version("1.0, 9.9")  # one it does not speak: that is what it says
