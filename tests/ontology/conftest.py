"""Make this directory's test modules importable from each other under pytest's importlib
import mode (``test_gold`` reuses ``test_embedded_labeler.keyword_encoder``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
