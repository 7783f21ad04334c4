"""`memlens stimuli …`, `memlens questions …` and the `memlens ontology` group.

Argument parsing only; the work is in ``memlens.stimuli`` and ``memlens.questions``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from memlens.cli import argtypes as at
from memlens.cli import gold_cmd, label_cmd
from memlens.cli.call_flags import add_call_flags
from memlens.errors import MemlensError
from memlens.store import RunStore
from memlens.textsafe import for_terminal


def register(subparsers) -> None:
    """Add ``stimuli``, ``questions`` and ``ontology`` (whose sub-commands label_cmd adds)."""
    _register_stimuli(subparsers)
    _register_questions(subparsers)
    ontology_parser = subparsers.add_parser("ontology", help="the value ontology: show, "
                                            "agreement, refine, sample")
    ont_sub = ontology_parser.add_subparsers(dest="ontology_command", metavar="COMMAND")

    register_ontology = getattr(label_cmd, "register_ontology", None)
    if register_ontology is not None:
        register_ontology(ont_sub)

    gold_cmd.register_ontology(ont_sub)


def _register_stimuli(subparsers) -> None:
    parser = subparsers.add_parser("stimuli", help="the memory-stimulus catalogue")
    sub = parser.add_subparsers(dest="stimuli_command", metavar="COMMAND")
    listing = sub.add_parser("list", help="list stimuli (bundled or --file)")
    listing.add_argument("--class", dest="stimulus_class", metavar="C",
                         help="only this class: control, noise, persona or life_event")
    listing.add_argument("--format", choices=("table", "jsonl"), default="table",
                         help="output format (default %(default)s)")
    listing.add_argument("--file", metavar="JSONL", help="a user catalogue instead of the bundled")
    listing.set_defaults(func=run_stimuli_list)


def _register_questions(subparsers) -> None:
    parser = subparsers.add_parser("questions", help="the question benchmark and its filtering")
    sub = parser.add_subparsers(dest="questions_command", metavar="COMMAND")
    listing = sub.add_parser("list", help="list questions (bundled or --file)")
    listing.add_argument("--format", choices=("table", "jsonl"), default="table",
                         help="output format (default %(default)s)")
    listing.add_argument("--file", metavar="JSONL", help="a question file instead of the bundled")
    listing.set_defaults(func=run_questions_list)

    filtering = sub.add_parser("filter", help="filter candidate questions (keywords, rater)",
                               description="Read candidates (.jsonl, .csv or a local datasets "
                               "folder), apply the App. A keyword rules and optionally an LLM "
                               "rater; write survivors with provenance as JSONL.")
    filtering.add_argument("input", metavar="IN",
                           help="candidate questions: JSONL/CSV/Parquet file or datasets folder")
    filtering.add_argument("--out", required=True, type=at.out_file, metavar="OUT.jsonl",
                           help="the kept questions (JSON lines)")
    filtering.add_argument("--rater", metavar="MODEL", help="model string of the LLM rater")
    filtering.add_argument("--text-field", metavar="F", help="column holding the question text "
                           "(with --source-preset: replaces the preset's text columns)")
    filtering.add_argument("--source-preset", metavar="PRESET",
                           help="read IN as one of the paper's sources (columns, composition, "
                                "skipped rows, provenance); see `memlens questions sources`")
    filtering.add_argument("--source", metavar="NAME",
                           help="provenance name (default: the preset name, else the file stem)")
    filtering.add_argument("--split", metavar="S", help="split of a datasets folder")
    filtering.add_argument("--cache-dir", metavar="DIR", help="run directory caching rater calls")
    filtering.add_argument("--rater-limit", type=at.positive_int, metavar="N",
                           help="rate only the first N questions the keywords kept (a subset "
                                "for a slow rater; only rated questions are written)")
    add_call_flags(filtering)
    filtering.set_defaults(func=run_questions_filter)

    sources = sub.add_parser("sources", help="list the source presets (App. G) with references",
                             description="The named presets for --source-preset: the dataset "
                             "each was written for, its license, the columns used and whether "
                             "they were verified or are a best guess.")
    sources.set_defaults(func=run_questions_sources)

    ortho = sub.add_parser(
        "orthogonality", help="rate (question, stimulus) pairs for relevance (App. B.2)",
        description="Ask an LLM rater whether each persona / life-event stimulus is relevant "
                    "to answering each question; write one JSON line per pair with the verdict "
                    "and whether it is excluded at --threshold. Control and noise stimuli are "
                    "not rated.")
    ortho.add_argument("--rater", required=True, metavar="MODEL", help="model string of the rater")
    ortho.add_argument("--questions", metavar="F", help="questions file (default: bundled)")
    ortho.add_argument("--stimuli", metavar="F", help="stimuli catalogue (default: bundled)")
    ortho.add_argument("--threshold", type=at.unit_interval, default=0.5, metavar="T",
                       help="confidence from which a relevant pair is excluded (default 0.5)")
    ortho.add_argument("--out", required=True, type=at.out_file, metavar="OUT.jsonl",
                       help="one rating per (question, stimulus) pair (JSON lines)")
    ortho.add_argument("--cache-dir", metavar="DIR", help="run directory caching rater calls")
    add_call_flags(ortho)
    ortho.set_defaults(func=run_questions_orthogonality)

    annotate = sub.add_parser("annotate", help="human-annotation round trip")
    steps = annotate.add_subparsers(dest="annotate_command", metavar="COMMAND")
    export = steps.add_parser("export", help="write a CSV for three annotators")
    export.add_argument("input", metavar="QUESTIONS.jsonl", help="the questions to annotate")
    export.add_argument("--out", required=True, type=at.out_file, metavar="OUT.csv",
                        help="annotation sheet for human raters (CSV)")
    export.set_defaults(func=run_annotate_export)
    imported = steps.add_parser("import", help="read ratings: strict / relaxed sets, Fleiss' kappa")
    imported.add_argument("csv", nargs="+", metavar="CSV",
                          help="the filled-in export, or one CSV per annotator (id, rating)")
    imported.add_argument("--strict-out", type=at.out_file, metavar="JSONL", help="write the unanimous set")
    imported.add_argument("--relaxed-out", type=at.out_file, metavar="JSONL", help="write the >= 2/3 set")
    imported.set_defaults(func=run_annotate_import)


def run_stimuli_list(args: argparse.Namespace) -> int:
    """Print the catalogue as a table with counts, or as JSONL."""
    from memlens.stimuli import load_stimuli, select_stimuli  # lazy: keeps memlens --help light

    stimuli = load_stimuli(args.file)
    if args.stimulus_class:
        stimuli = select_stimuli(stimuli, classes=[args.stimulus_class])
    if args.format == "jsonl":
        _write_jsonl(sys.stdout, [s.to_dict() for s in stimuli])
        return 0
    for s in stimuli:
        shown = s.text if s.text.strip() else repr(s.text)
        print(for_terminal(f"{s.id:<40} {_clip(shown, 70)}"))
    print()
    for name in dict.fromkeys(s.stimulus_class for s in stimuli):
        members = [s for s in stimuli if s.stimulus_class == name]
        categories = len({s.category for s in members})
        print(for_terminal(f"{name:<12} {categories:>3} categories {len(members):>4} stimuli"))
    print(f"{'total':<12} {len({s.category for s in stimuli}):>3} categories {len(stimuli):>4} stimuli")
    return 0


def run_questions_list(args: argparse.Namespace) -> int:
    """Print counts per category / subcategory, or every question as JSONL."""
    from memlens.questions import load_questions  # lazy: keeps memlens --help light

    questions = load_questions(args.file)
    if args.format == "jsonl":
        _write_jsonl(sys.stdout, [q.to_dict() for q in questions])
        return 0
    by_category = Counter(q.category for q in questions)
    by_subcategory = Counter((q.category, q.subcategory) for q in questions)
    for category, count in by_category.items():
        print(for_terminal(f"{category:<34} {count:>5}"))
        for (cat, subcategory), sub_count in by_subcategory.items():
            if cat == category:
                print(for_terminal(f"  {subcategory:<32} {sub_count:>5}"))
    print(f"{'total':<34} {len(questions):>5}  ({len(by_category)} categories, "
          f"{len(by_subcategory)} subcategories)")
    return 0


def run_questions_filter(args: argparse.Namespace) -> int:
    """Load candidates, filter, print counts per stage, write survivors."""
    from memlens.questions import load_candidates  # lazy: keeps memlens --help light
    from memlens.questions.filtering import filter_candidates  # lazy: keeps memlens --help light

    if args.source_preset:
        # lazy: keeps memlens --help light
        from memlens.questions.source_presets import load_preset_candidates

        candidates = load_preset_candidates(args.input, args.source_preset,
                                            text_field=args.text_field, source=args.source,
                                            split=args.split)
    else:
        candidates = load_candidates(args.input, text_field=args.text_field, source=args.source,
                                     split=args.split)
    if args.rater_limit is not None and not args.rater:
        raise MemlensError("--rater-limit limits the rater: add --rater MODEL")
    model = None
    if args.rater:
        from memlens.models import get_model  # lazy: keeps memlens --help light

        model = get_model(args.rater)
    if args.cache_dir and model is not None:
        with RunStore(args.cache_dir) as store:
            result = filter_candidates(candidates, model=model, store=store,
                                       rater_limit=args.rater_limit)
    else:
        result = filter_candidates(candidates, model=model, rater_limit=args.rater_limit)
    _write_jsonl_file(Path(args.out), result.survivors)
    print(result.summary())
    print("keyword rules (candidates read):\n" + result.rule_summary())
    print(f"wrote {len(result.survivors)} questions to {args.out}")
    return 0


def run_questions_sources(args: argparse.Namespace) -> int:
    """Print every source preset with its reference, license and column evidence."""
    # lazy: keeps memlens --help light
    from memlens.questions.source_presets import describe_presets

    print(describe_presets())
    return 0


def run_questions_orthogonality(args: argparse.Namespace) -> int:
    """Rate every (question, persona / life-event stimulus) pair; write the ratings."""
    from memlens.models import get_model  # lazy: keeps memlens --help light
    from memlens.questions import load_questions  # lazy: keeps memlens --help light
    from memlens.questions.orthogonality import (  # lazy: keeps memlens --help light
        check_threshold,
        is_excluded,
        rate_relevance,
        rating_pairs,
    )
    from memlens.stimuli import load_stimuli  # lazy: keeps memlens --help light

    threshold = check_threshold(args.threshold)
    pairs = rating_pairs(load_questions(args.questions), load_stimuli(args.stimuli))
    if not pairs:
        raise MemlensError("no (question, persona / life-event stimulus) pair to rate: the "
                           "stimuli hold no persona or life_event stimulus")
    model = get_model(args.rater)
    if args.cache_dir:
        with RunStore(args.cache_dir) as store:
            ratings = rate_relevance(pairs, model, store)
    else:
        ratings = rate_relevance(pairs, model)
    rows = [{"id": r.id, **r.to_dict(), "excluded": is_excluded(r, threshold)} for r in ratings]
    _write_jsonl_file(Path(args.out), rows)
    print(f"pairs rated         {len(rows):>6}")
    print(f"relevant            {sum(r.relevant for r in ratings):>6}")
    print(f"excluded (>= {threshold:g})  {sum(row['excluded'] for row in rows):>6}")
    print(f"rater errors        {sum(1 for r in ratings if r.error):>6}")
    print(f"wrote {len(rows)} ratings to {args.out}")
    return 0


def run_annotate_export(args: argparse.Namespace) -> int:
    """Write the annotation CSV for a question file."""
    # lazy: keeps memlens --help light
    from memlens.questions import load_questions
    from memlens.questions.filtering import export_for_annotation

    count = export_for_annotation(load_questions(args.input), args.out)
    print(f"wrote {count} items to {args.out} (fill rater_1..rater_3 with yes / no)")
    return 0


def run_annotate_import(args: argparse.Namespace) -> int:
    """Read ratings, print set sizes and Fleiss' kappa, optionally write the sets."""
    from memlens.questions.filtering import import_annotations  # lazy: keeps memlens --help light

    strict, relaxed, kappa = import_annotations(args.csv)
    print(f"strict (unanimous)  {len(strict):>6}")
    print(f"relaxed (>= 2/3)    {len(relaxed):>6}")
    print(f"Fleiss' kappa       {kappa:>9.3f}")
    for path, rows in ((args.strict_out, strict), (args.relaxed_out, relaxed)):
        if path:
            _write_jsonl_file(Path(path), rows)
    return 0


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _write_jsonl(handle, rows: list[dict]) -> None:
    for row in rows:
        handle.write(for_terminal(json.dumps(row, ensure_ascii=False)) + "\n")  # same JSON


def _write_jsonl_file(path: Path, rows: list[dict]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            _write_jsonl(handle, rows)
    except OSError as error:
        raise MemlensError(f"{path}: cannot write ({error})") from None
