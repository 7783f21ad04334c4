"""Report figures and tables on a full disk: one MemlensError naming the file, old file intact."""

import errno

import matplotlib.figure
import pandas as pd
import pytest

from memlens.errors import MemlensError
from memlens.report import figures, tables


def _full_disk_writer(payload: bytes):
    def write(self, target, *args, **kwargs):
        with open(target, "wb") as handle:  # a writer that gets half-way, then the disk fills
            handle.write(payload)
        raise OSError(errno.ENOSPC, "No space left on device")
    return write


def test_full_disk_while_saving_a_figure_keeps_the_old_svg(tmp_path, monkeypatch):
    (tmp_path / "validity.svg").write_text("<svg>complete</svg>")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _full_disk_writer(b"<svg><pa"))
    fig = matplotlib.figure.Figure()
    with pytest.raises(MemlensError, match=r"cannot write .*validity\.svg: the disk is full"):
        figures.save_figure(fig, tmp_path, "validity")
    assert (tmp_path / "validity.svg").read_text() == "<svg>complete</svg>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["validity.svg"]


def test_full_disk_while_writing_a_table_keeps_the_old_csv(tmp_path, monkeypatch):
    (tmp_path / "drift.csv").write_text("a\n1\n")
    monkeypatch.setattr(pd.DataFrame, "to_csv", _full_disk_writer(b"a\n"))
    with pytest.raises(MemlensError, match=r"cannot write .*drift\.csv: the disk is full"):
        tables.write_table(pd.DataFrame({"a": [2]}), tmp_path, "drift")
    assert (tmp_path / "drift.csv").read_text() == "a\n1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["drift.csv"]
