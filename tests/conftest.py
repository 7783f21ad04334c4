"""Shared test fixtures."""

import os

# The embedded embedder loads from the wheel; never let a test reach a hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
