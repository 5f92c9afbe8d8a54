"""Locations of the data shipped with the repository."""

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
COSTS_DIR = DATA_DIR / "costs"
