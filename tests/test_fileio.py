"""Atomic output files: the old file survives any failed write; disk full is one clear error."""

import errno
import os

import pytest

from memlens.errors import MemlensError
from memlens.fileio import append_text, atomic_path, atomic_write_bytes, atomic_write_text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old")
    atomic_write_text(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()  # like a plain open(), not 0600
    atomic_write_bytes(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"


def test_writer_failing_midway_keeps_the_old_file(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("a,b\n1,2\n")
    with pytest.raises(RuntimeError, match="writer broke"), atomic_path(target) as temporary:
        assert temporary.parent == tmp_path and temporary.suffix == ".csv"
        temporary.write_text("a,b\n1,")
        raise RuntimeError("writer broke")
    assert target.read_text() == "a,b\n1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_disk_full_during_os_write_is_one_clear_error(tmp_path, monkeypatch):
    target = tmp_path / "stats.json"
    target.write_text('{"old": true}')
    real_write = os.write
    calls = []

    def full_after_ten_bytes(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:10]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_after_ten_bytes)
    with pytest.raises(MemlensError, match=r"cannot write .*stats\.json: the disk is full "
                                           r"\(No space left on device\)") as error:
        atomic_write_text(target, '{"new": ' + "1" * 100 + "}")
    monkeypatch.undo()
    assert calls == [109, 99]  # the first write was short, the second hit the full disk
    assert error.value.__cause__ is None and error.value.__suppress_context__
    assert target.read_text() == '{"old": true}'
    assert [p.name for p in tmp_path.iterdir()] == ["stats.json"]


def test_disk_full_inside_a_path_writer(tmp_path):
    target = tmp_path / "figure.svg"
    target.write_text("<svg>old</svg>")
    with pytest.raises(MemlensError, match=r"figure\.svg: the disk is full"), \
            atomic_path(target) as temporary:
        temporary.write_text("<svg><path")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == "<svg>old</svg>"
    assert [p.name for p in tmp_path.iterdir()] == ["figure.svg"]


def test_missing_directory_is_a_clear_error(tmp_path):
    with pytest.raises(MemlensError, match=r"cannot write .*nowhere/x\.txt: No such file"):
        atomic_write_text(tmp_path / "nowhere" / "x.txt", "x")


def test_append_text_appends_and_errors_clearly(tmp_path):
    log = tmp_path / "history.jsonl"
    append_text(log, "1\n")
    append_text(log, "2\n")
    assert log.read_text() == "1\n2\n"
    with pytest.raises(MemlensError, match=r"cannot append to .*: Is a directory"):
        append_text(tmp_path, "x")
