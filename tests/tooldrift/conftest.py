"""Make this directory's helper module (tooldrift_fakes) importable under pytest's importlib
import mode."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
