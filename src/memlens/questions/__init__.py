"""Questions: the bundled benchmark, loaders for candidates from any source, and filtering."""

from memlens.questions.benchmark import Question, load_questions, select_questions
from memlens.questions.sources import Candidate, load_candidates

__all__ = ["Candidate", "Question", "load_candidates", "load_questions", "select_questions"]
