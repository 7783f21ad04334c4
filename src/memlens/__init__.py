"""memlens: measure and reduce memory-induced drift in personalized LLMs and agents."""

from memlens.errors import MemlensError

__version__ = "0.1.0"
__all__ = ["MemlensError", "__version__"]
