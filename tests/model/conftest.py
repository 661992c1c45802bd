"""Fixtures of the model tests: the constants of the bundled release, read once."""

from __future__ import annotations

import pytest

from goblueprint.model.constants import Constants, from_source


@pytest.fixture(scope="session")
def consts() -> Constants:
    return from_source()
