"""Fixtures the snapshot cache's tests share."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SMALL = Path(__file__).resolve().parents[2] / "fixtures" / "small-cluster.yaml"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory (not created yet) for this process and the commands it starts."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("KSCHED_CACHE_DIR", str(folder))
    monkeypatch.delenv("KSCHED_NO_CACHE", raising=False)
    return folder


@pytest.fixture
def snapshot(tmp_path):
    """A copy of the three-node fixture: a file of the test's own."""
    path = tmp_path / "cluster.yaml"
    shutil.copy(SMALL, path)
    return str(path)
