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
