"""Value ontology, step labelers (embedded, LLM), agreement statistics and refinement.

>>> from memlens.ontology import load_ontology
>>> ontology = load_ontology()
>>> ontology.root_of("personal.autonomy_authenticity")
'Personal'
"""

from memlens.ontology.agreement import cohen_kappa, fleiss_kappa, pairwise_agreement
from memlens.ontology.labelers import Labeler, get_labeler
from memlens.ontology.load import ALT_ONTOLOGY, DEFAULT_ONTOLOGY, load_ontology, parse_ontology
from memlens.ontology.schema import UNLABELED, Ontology, Root, Symbol, Triggers, symbol_sequence

__all__ = [
    "ALT_ONTOLOGY",
    "DEFAULT_ONTOLOGY",
    "UNLABELED",
    "Labeler",
    "Ontology",
    "Root",
    "Symbol",
    "Triggers",
    "cohen_kappa",
    "fleiss_kappa",
    "get_labeler",
    "load_ontology",
    "pairwise_agreement",
    "parse_ontology",
    "symbol_sequence",
]
