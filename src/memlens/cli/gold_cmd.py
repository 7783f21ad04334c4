"""`memlens ontology score` (a labeler against the bundled gold steps or any gold file) and
`memlens ontology audit-import` (scores against a filled-in audit CSV from `ontology sample`)."""

from __future__ import annotations

import argparse
import json

from memlens.cli import argtypes as at
from memlens.errors import MemlensError
from memlens.textsafe import for_terminal


def register_ontology(ont_sub) -> None:
    """Add ``score`` and ``audit-import`` to the ``memlens ontology`` group."""
    score = ont_sub.add_parser(
        "score", help="score a labeler against hand-labeled gold steps",
        description="Accuracy (root, subcategory), coverage, Cohen's kappa and the root "
                    "confusion matrix of a labeler on gold steps (default: the bundled held-out "
                    "gold set of real SmolLM2 steps), with 95 %% Wilson / bootstrap intervals.")
    score.add_argument("--gold", default=None, metavar="FILE",
                       help="gold JSON lines (id, text, root, subcategory); default: bundled")
    score.add_argument("--split", choices=("gold", "dev"), default="gold",
                       help="bundled file to use when --gold is not given (default: gold)")
    _labeler_options(score, default="embedded")
    score.set_defaults(func=run_score)

    audit = ont_sub.add_parser(
        "audit-import", help="score labels against a filled-in human audit CSV",
        description="Read an audit CSV written by 'memlens ontology sample' after a human "
                    "filled in human_label (a symbol id, a root id or 'unlabeled'; an empty "
                    "human_label with verdict 'agree' accepts the label) and score the CSV's "
                    "'label' column (or --labeler, re-labeling the texts) with the same metrics "
                    "as 'ontology score'.")
    audit.add_argument("file", metavar="audit.csv",
                       help="the audit CSV of 'memlens ontology sample', filled in by a human")
    _labeler_options(audit, default=None)
    audit.set_defaults(func=run_audit_import)


def _labeler_options(parser, default: str | None) -> None:
    parser.add_argument("--labeler", default=default,
                        help="'embedded' or a model string" + (" (default: embedded)" if default
                                                              else " (default: the CSV's labels)"))
    parser.add_argument("--classifier", default=None, metavar="FILE",
                        help="embedded labeler: a classifier .npz")
    parser.add_argument("--abstain", action="store_true",
                        help="embedded labeler: steps closest to the no-value prototype are "
                             "'unlabeled'")
    parser.add_argument("--extra-examples", action="store_true",
                        help="embedded labeler: add the bundled realistic examples to the "
                             "prototypes")
    parser.add_argument("--min-margin", type=at.finite_float(0.0, 2.0), default=None, metavar="M",
                        help="embedded labeler: also abstain when the best prototype beats the "
                             "second by less than M (cosine)")
    parser.add_argument("--ontology", default=None, metavar="FILE",
                        help="ontology file or bundled name (default: driftlens-v1)")
    parser.add_argument("--seed", type=at.seed, default=0, help="bootstrap seed (default: 0)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _build_labeler(args: argparse.Namespace, ontology):
    from memlens.ontology import get_labeler  # lazy: keeps memlens --help light

    options = {}
    if args.classifier:
        options["classifier_path"] = args.classifier
    if args.min_margin is not None:
        options["min_margin"] = args.min_margin
    if args.abstain:
        options["abstain"] = True
    if args.extra_examples:
        options["extra_examples"] = True
    from memlens.ontology.labelers import is_embedded  # lazy: keeps memlens --help light

    if options and not is_embedded(args.labeler):
        raise MemlensError("--classifier, --abstain, --extra-examples and --min-margin apply "
                           "only to --labeler embedded")
    return get_labeler(args.labeler, ontology=ontology, **options)


def _print(report: dict, as_json: bool) -> None:
    from memlens.ontology.gold import format_score  # lazy: keeps memlens --help light

    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(for_terminal(format_score(report)))


def run_score(args: argparse.Namespace) -> int:
    """Score a labeler on the gold file and print the report."""
    # lazy: keeps memlens --help light
    from memlens.ontology import load_ontology
    from memlens.ontology.gold import DEV_FILE, GOLD_FILE, bundled_path, load_gold, score_labeler

    ontology = load_ontology(args.ontology)
    path = args.gold or bundled_path(DEV_FILE if args.split == "dev" else GOLD_FILE)
    rows = load_gold(path, ontology)
    report = score_labeler(_build_labeler(args, ontology), rows, ontology, seed=args.seed)
    report.pop("predicted")
    _print({"gold": str(path), **report}, args.json)
    return 0


def run_audit_import(args: argparse.Namespace) -> int:
    """Score the audit CSV's labels (or a labeler's) against the human labels in it."""
    # lazy: keeps memlens --help light
    from memlens.ontology import load_ontology
    from memlens.ontology.audit_import import read_audit
    from memlens.ontology.gold import score_labeler, score_labels

    ontology = load_ontology(args.ontology)
    rows, labels, skipped = read_audit(args.file, ontology)
    if args.labeler is None:
        if args.classifier or args.abstain or args.extra_examples or args.min_margin is not None:
            raise MemlensError("--classifier, --abstain, --extra-examples and --min-margin "
                               "need --labeler embedded")
        report = {"labeler": "labels in the CSV",
                  **score_labels(rows, labels, ontology, seed=args.seed)}
    else:
        report = score_labeler(_build_labeler(args, ontology), rows, ontology, seed=args.seed)
        report.pop("predicted")
    _print({"audit": str(args.file), "skipped": skipped, **report}, args.json)
    if skipped and not args.json:
        print(f"({skipped} rows without a human label were skipped)")
    return 0
