"""Value ontology, step labelers (embedded, LLM), agreement statistics and refinement.

>>> from memlens.ontology import load_ontology
>>> ontology = load_ontology()
>>> ontology.root_of("personal.autonomy_authenticity")
'Personal'
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "ALT_ONTOLOGY": "load",
    "DEFAULT_ONTOLOGY": "load",
    "Labeler": "labelers",
    "Ontology": "schema",
    "Root": "schema",
    "Symbol": "schema",
    "Triggers": "schema",
    "UNLABELED": "schema",
    "agreement_report": "reliability",
    "cohen_kappa": "agreement",
    "definition_robustness": "reliability",
    "fleiss_kappa": "agreement",
    "get_labeler": "labelers",
    "load_ontology": "load",
    "pairwise_agreement": "agreement",
    "parse_ontology": "load",
    "refine": "refine",
    "repeat_agreement": "reliability",
    "score_labeler": "gold",
    "score_labels": "gold",
    "symbol_sequence": "schema",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
