"""Shared fixtures. The package is imported from this checkout (python/); the library from
$MESHCAST_LIBRARY when the CTest test runs it, else the usual search."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import meshcast  # noqa: E402


def require_deps() -> bool:
    return os.environ.get("MESHCAST_REQUIRE_DEPS") == "1"


def need(condition: bool, why: str) -> None:
    """Skips unless condition; under MESHCAST_REQUIRE_DEPS=1 a missing dependency fails."""
    if not condition:
        if require_deps():
            pytest.fail(why + " (MESHCAST_REQUIRE_DEPS=1)")
        pytest.skip(why)


@pytest.fixture
def comm():
    with meshcast.Communicator() as c:
        yield c


@pytest.fixture
def meshcast_bin():
    path = os.environ.get("MESHCAST_BIN")
    if not path:
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.path.join(root, "build", "meshcast")
    need(os.path.exists(path), f"meshcast command not found at {path} (set MESHCAST_BIN)")
    return path
