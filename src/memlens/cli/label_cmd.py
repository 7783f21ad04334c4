"""`memlens label` and the `memlens ontology` sub-commands show / agreement / robustness /
sample / refine (the `ontology` group itself is created in content_cmd.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memlens.cli import argtypes as at
from memlens.cli.call_flags import add_call_flags, finished_status
from memlens.errors import MemlensError
from memlens.store import RunStore
from memlens.textsafe import for_terminal


def register(subparsers) -> None:
    """Add ``memlens label``."""
    parser = subparsers.add_parser(
        "label", help="label reasoning steps with ontology symbols",
        description="Label steps (JSON lines with 'id' and 'text', optional 'response_id') with "
                    "one ontology symbol each; output rows add 'label' and 'root'.")
    parser.add_argument("--labeler", default="embedded",
                        help="'embedded' (MiniLM, offline) or a model string, e.g. "
                             "'openai:gpt-4.1-mini' (default: embedded)")
    parser.add_argument("--in", dest="input", required=True, metavar="STEPS.jsonl",
                        help="steps to label: JSON lines with 'id' and 'text'")
    parser.add_argument("--out", required=True, type=at.out_file, metavar="LABELS.jsonl",
                        help="labels file: the steps plus 'label' and 'root'")
    parser.add_argument("--ontology", default=None, metavar="FILE",
                        help="ontology JSON/YAML file or bundled name (default: driftlens-v1)")
    parser.add_argument("--classifier", default=None, metavar="FILE",
                        help="embedded labeler: a classifier saved by EmbeddedLabeler."
                             "save_classifier (.npz; old pickle files are refused, see "
                             "'memlens ontology convert-classifier')")
    parser.add_argument("--run-dir", default=None, metavar="DIR",
                        help="LLM labeler: cache and resume the calls in this run directory")
    parser.add_argument("--context-tokens", type=at.int_range(256, 10_000_000), metavar="N",
                        help="LLM labeler: the model's context (prompt + reply tokens); a "
                             "response that would not fit is labeled in several calls (default: "
                             "what the server reports, e.g. llama.cpp's /props, else unbounded)")
    add_call_flags(parser)
    parser.set_defaults(func=run_label)


def run_label(args: argparse.Namespace) -> int:
    """Label a steps file and write the labels file; print how many steps got each root."""
    # lazy: keeps memlens --help light
    from memlens.ontology import get_labeler, load_ontology
    from memlens.ontology.label_files import label_rows, read_steps, write_jsonl

    ontology = load_ontology(args.ontology)
    rows = read_steps(args.input)
    options = {"classifier_path": args.classifier} if args.classifier else {}
    if args.context_tokens is not None:
        if args.labeler in ("embedded", "embedded-abstain", "keyword"):
            raise MemlensError("--context-tokens applies only to an LLM labeler (a model string)")
        options["context_tokens"] = args.context_tokens
    from memlens.ontology.labelers import is_embedded  # lazy: keeps memlens --help light

    if args.classifier and not is_embedded(args.labeler):
        raise MemlensError("--classifier applies only to --labeler embedded")
    if args.run_dir:
        with RunStore(args.run_dir) as store:
            labeler = get_labeler(args.labeler, ontology=ontology, store=store, **options)
            labeled = label_rows(labeler, rows, ontology)
    else:
        labeler = get_labeler(args.labeler, ontology=ontology, **options)
        labeled = label_rows(labeler, rows, ontology)
    write_jsonl(args.out, labeled)
    _report_problems(labeler, args.out)
    counts: dict[str, int] = {}
    for row in labeled:
        counts[row["root"]] = counts.get(row["root"], 0) + 1
    summary = ", ".join(f"{root} {count}" for root, count in sorted(counts.items()))
    print(f"labeled {len(labeled)} steps with {labeler.labeler_id} -> {args.out} ({summary})")
    return failed_calls_status(labeler)


def failed_calls_status(labeler) -> int:
    """0, or exit status 3 with a note on stderr when labeler calls failed for good (their steps
    are ``unlabeled`` in the output, to be retried by a re-run) — never 0 when every call
    failed (e.g. prompts longer than the server's context)."""

    counts = getattr(labeler, "counts", None)
    failed = len(getattr(labeler, "failed_calls", ()) or ())
    return finished_status(failed, counts.responses if counts else failed, "labeler calls")


def _report_problems(labeler, out: str) -> None:
    """Keep the LLM labeler's invalid replies next to the output and say how many there were."""
    counts = getattr(labeler, "counts", None)
    if counts is None or not counts.problems:
        return
    from memlens.ontology.label_files import write_jsonl  # lazy: keeps memlens --help light

    path = Path(out).with_suffix(".problems.jsonl")
    write_jsonl(path, counts.problems)
    print(f"{counts.unlabeled} of {counts.responses} responses could not be labeled "
          f"(steps marked 'unlabeled'; replies kept in {path}); {counts.repaired} were repaired")


def register_ontology(ont_sub) -> None:
    """Add show / agreement / robustness / sample / refine to the ``memlens ontology`` group."""
    show = ont_sub.add_parser("show", help="print the ontology")
    show.add_argument("--format", choices=("table", "json"), default="table",
                      help="output format (default %(default)s)")
    show.add_argument("--ontology", default=None, metavar="FILE",
                      help="ontology file or bundled name (default: driftlens-v1)")
    show.set_defaults(func=run_show)

    agree = ont_sub.add_parser("agreement", help="agreement between two or more label files")
    agree.add_argument("files", nargs="+", metavar="LABELS.jsonl",
                       help="two or more label files of the same steps")
    agree.add_argument("--level", choices=("label", "root"), default="label",
                       help="compare symbols (label) or their roots (default %(default)s)")
    agree.add_argument("--ontology", default=None, metavar="FILE",
                       help="ontology file or bundled name (default: driftlens-v1)")
    agree.add_argument("--json", action="store_true", help="print the report as JSON")
    agree.set_defaults(func=run_agreement)

    robust = ont_sub.add_parser("robustness",
                                help="within-labeler repeat agreement and definition robustness")
    robust.add_argument("--labeler", required=True, help="'embedded' or a model string")
    robust.add_argument("--in", dest="input", required=True, metavar="STEPS.jsonl",
                        help="steps to label: JSON lines with 'id' and 'text'")
    robust.add_argument("--ontology", default=None, metavar="FILE",
                        help="ontology file or bundled name (default: driftlens-v1)")
    robust.add_argument("--alt", default="driftlens-v1-alt", metavar="FILE",
                        help="reworded ontology with the same ids (default: driftlens-v1-alt)")
    robust.add_argument("--seeds", type=at.nonneg_int, nargs=2, default=(1, 2), metavar=("S1", "S2"),
                        help="seeds of the two repeat runs (default 1 2)")
    add_call_flags(robust)
    robust.set_defaults(func=run_robustness)

    sample = ont_sub.add_parser("sample", help="random sample of labels for human audit (CSV)")
    sample.add_argument("file", metavar="LABELS.jsonl", help="labels file to sample from")
    sample.add_argument("--n", type=at.positive_int, default=100,
                        help="labels in the sample (default %(default)s)")
    sample.add_argument("--seed", type=at.nonneg_int, default=0,
                        help="sampling seed (default %(default)s)")
    sample.add_argument("--out", required=True, type=at.out_file, metavar="audit.csv",
                        help="the audit sheet (CSV) a human fills in")
    sample.set_defaults(func=run_sample)

    refine = ont_sub.add_parser("refine", help="label -> agreement -> LLM revision loop")
    refine.add_argument("--labelers", nargs="+", required=True, metavar="SPEC",
                        help="two or more labelers ('embedded' or model strings)")
    refine.add_argument("--steps", required=True, metavar="STEPS.jsonl",
                        help="steps to label each round: JSON lines with 'id' and 'text'")
    refine.add_argument("--reviser", required=True, metavar="MODEL",
                        help="model string of the LLM that rewrites the definitions")
    refine.add_argument("--out", required=True, type=at.out_dir, metavar="DIR",
                        help="folder for each round's ontology, labels and agreement")
    refine.add_argument("--ontology", default=None, metavar="FILE",
                        help="starting ontology (default: driftlens-v1)")
    refine.add_argument("--threshold", type=at.unit_interval, default=0.8,
                        help="stop once agreement reaches this (default %(default)s)")
    refine.add_argument("--max-iter", type=at.int_range(1, 1000), default=5,
                        help="at most this many revision rounds (default %(default)s)")
    add_call_flags(refine)
    refine.set_defaults(func=run_refine)

    convert = ont_sub.add_parser(
        "convert-classifier", help="rewrite an old pickled labeler classifier as safe .npz",
        description="Old classifier files were pickles, and unpickling runs whatever code the "
                    "file holds. This reads OLD with pickle (only with --trust-pickle) and writes "
                    "NEW as plain arrays that --classifier loads without running code.")
    convert.add_argument("old", metavar="OLD", help="the old pickled classifier file")
    convert.add_argument("new", metavar="NEW.npz", help="where to write the safe .npz file")
    convert.add_argument("--trust-pickle", action="store_true",
                         help="DANGEROUS for files you did not make: unpickling OLD can run any "
                              "code in it; pass this only for a classifier you trained yourself")
    convert.set_defaults(func=run_convert_classifier)


def run_show(args: argparse.Namespace) -> int:
    """Print the ontology as a table or as JSON."""
    from memlens.ontology import load_ontology  # lazy: keeps memlens --help light

    ontology = load_ontology(args.ontology)
    if args.format == "json":
        print(for_terminal(json.dumps(ontology.model_dump(mode="json"), ensure_ascii=False,
                                      indent=2)))
        return 0
    print(for_terminal(f"{ontology.name} v{ontology.version} — {len(ontology.roots)} roots, "
                       f"{len(ontology.symbols)} subcategories "
                       f"(sha256 {ontology.content_hash()[:12]})"))
    for root in ontology.roots:
        print(for_terminal(f"\n{root.id}: {root.definition}"))
        for symbol in (s for s in ontology.symbols if s.root == root.id):
            print(for_terminal(f"  {symbol.id:<38} {symbol.name}"))
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    """Pairwise agreement, Cohen's kappa per pair and Fleiss' kappa over the label files."""
    # lazy: keeps memlens --help light
    from memlens.ontology import load_ontology
    from memlens.ontology.label_files import read_labels
    from memlens.ontology.reliability import agreement_report, format_report

    if len(args.files) < 2:
        raise MemlensError("agreement needs at least two label files")
    ontology = load_ontology(args.ontology)
    field = "label" if args.level == "label" else "root"
    label_sets = {}
    for file in args.files:
        name = file if file not in label_sets else f"{file}#{len(label_sets)}"
        label_sets[name] = {row["id"]: row[field] for row in read_labels(file, ontology)}
    report = agreement_report(label_sets)
    report["level"] = args.level
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def run_robustness(args: argparse.Namespace) -> int:
    """Repeat agreement (two seeds at T=1) and agreement under the alternative wording."""
    # lazy: keeps memlens --help light
    from memlens.ontology import get_labeler, load_ontology
    from memlens.ontology.label_files import group_responses, read_steps
    from memlens.ontology.reliability import definition_robustness, repeat_agreement

    ontology, alternative = load_ontology(args.ontology), load_ontology(args.alt)
    rows = read_steps(args.input)
    responses = [[rows[i]["text"] for i in group] for group in group_responses(rows)]
    from memlens.ontology.labelers import is_embedded  # lazy: keeps memlens --help light

    embedded = is_embedded(args.labeler)
    sampling = {} if embedded else {"temperature": 1.0}
    repeat = repeat_agreement(
        lambda seed: get_labeler(args.labeler, ontology=ontology,
                                 **({} if embedded else {"seed": seed}), **sampling),
        responses, seeds=tuple(args.seeds))
    robust = definition_robustness(lambda o: get_labeler(args.labeler, ontology=o),
                                   responses, ontology, alternative)
    print(json.dumps({"labeler": args.labeler, "repeat": repeat, "definition_robustness": robust},
                     indent=2))
    return 0


def run_sample(args: argparse.Namespace) -> int:
    """Write a seeded random sample of a label file as an audit CSV."""
    # lazy: keeps memlens --help light
    from memlens.ontology.label_files import audit_sample, read_labels, write_audit_csv

    rows = audit_sample(read_labels(args.file), args.n, seed=args.seed)
    write_audit_csv(args.out, rows)
    print(f"wrote {len(rows)} rows for audit to {args.out}")
    return 0


def run_convert_classifier(args: argparse.Namespace) -> int:
    """Convert an old pickled classifier to the ``.npz`` format (needs ``--trust-pickle``)."""
    # lazy: keeps memlens --help light
    from memlens.ontology.embedded_labeler import convert_pickle_classifier

    path = convert_pickle_classifier(args.old, args.new, trust_pickle=args.trust_pickle)
    print(f"wrote {path}: load it with --classifier {path}")
    return 0


def run_refine(args: argparse.Namespace) -> int:
    """Run the refinement loop and print each version's agreement."""
    # lazy: keeps memlens --help light
    from memlens.models import get_model
    from memlens.ontology import get_labeler, load_ontology
    from memlens.ontology.label_files import group_responses, read_steps
    from memlens.ontology.refine import refine

    if len(set(args.labelers)) < 2:
        raise MemlensError("--labelers needs at least two different labelers")
    rows = read_steps(args.steps)
    responses = [[rows[i]["text"] for i in group] for group in group_responses(rows)]
    labelers = {spec: (lambda o, spec=spec: get_labeler(spec, ontology=o))
                for spec in args.labelers}
    result = refine(labelers, responses, get_model(args.reviser), load_ontology(args.ontology),
                    Path(args.out), threshold=args.threshold, max_iter=args.max_iter)
    for entry in result.history:
        if "mean_agreement" in entry:
            print(f"v{entry['version']}: agreement {100 * entry['mean_agreement']:.1f} % "
                  f"({entry['revision']})")
        else:
            print(f"v{entry['version']}: revision failed: {entry['reason']}")
    print(f"best: v{result.best_version} -> {Path(args.out) / f'v{result.best_version}.json'}")
    return 0
