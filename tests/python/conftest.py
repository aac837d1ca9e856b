"""Shared fixtures of the whdrx tests: the conformance captures and the module.

Run by scripts/pytest.sh with the interpreter and PYTHONPATH the build recorded
(BUILD/python/whdrx.env); the conformance captures are read in place from
$WHD_VECTORS_DIR, else ../shared/vectors beside the checkout.
"""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vectors() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("WHD_VECTORS_DIR") or REPO.parent / "shared" / "vectors")
    if not (d / "README.md").is_file():
        pytest.fail(f"conformance captures not found in {d}: set WHD_VECTORS_DIR")
    return d


@pytest.fixture(scope="session")
def whd_rx() -> str:
    """The whd-rx binary of the build the module came from (BUILD/apps/whd-rx/whd-rx)."""
    build = pathlib.Path(os.environ.get("WHD_BUILD") or REPO / "build")
    path = build / "apps" / "whd-rx" / "whd-rx"
    if not path.is_file():
        pytest.fail(f"whd-rx not found at {path}: build it, or set WHD_BUILD")
    return str(path)
