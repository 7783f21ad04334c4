"""The shared JSON-lines reader: text reading errors, line numbers, objects only, unique ids."""

from __future__ import annotations

import os
import re

import pytest

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, iter_json_objects, read_text


def rows_of(path):
    return list(iter_json_objects(read_text(path, "test file"), str(path)))


def test_blank_lines_are_skipped_and_numbers_count_them(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('\n{"id": "a"}\n   \n\t\n{"id": "b", "n": [1, 2]}\r\n\n', encoding="utf-8")
    assert rows_of(path) == [(2, {"id": "a"}), (5, {"id": "b", "n": [1, 2]})]


def test_utf8_text_is_kept(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "Café – 東京"}\n', encoding="utf-8")
    assert rows_of(path) == [(1, {"text": "Café – 東京"})]


def test_empty_file_yields_nothing(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n \n", encoding="utf-8")
    assert rows_of(path) == []


def test_bad_json_names_file_line_and_reason(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a"}\n\n{"id": \n{"id": "c"}\n', encoding="utf-8")
    with pytest.raises(MemlensError, match=re.escape(f"{path}:3: invalid JSON (Expecting value)")):
        rows_of(path)


def test_rows_before_the_bad_line_are_yielded_first(tmp_path):
    rows = iter_json_objects('{"id": "a"}\nnot json\n', "x.jsonl")
    assert next(rows) == (1, {"id": "a"})
    with pytest.raises(MemlensError, match=r"^x.jsonl:2: invalid JSON"):
        next(rows)


@pytest.mark.parametrize("line, kind", [
    ('["id", "text"]', "an array"),
    ('"just text"', "a string"),
    ("42", "a number"),
    ("1.5", "a number"),
    ("true", "true/false"),
    ("null", "null"),
])
def test_a_line_that_is_not_an_object_is_refused(tmp_path, line, kind):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": "a"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(MemlensError,
                       match=re.escape(f"{path}:2: expected a JSON object, got {kind}")):
        rows_of(path)


def test_expected_describes_the_wanted_object():
    with pytest.raises(MemlensError, match=r"^s.jsonl:1: expected a JSON object with fields "
                                           r"id, text, got an array$"):
        list(iter_json_objects("[1]", "s.jsonl", "a JSON object with fields id, text"))


def test_missing_file_is_named(tmp_path):
    path = tmp_path / "nope.jsonl"
    with pytest.raises(MemlensError, match=re.escape(f"{path}: steps file not found")):
        read_text(path, "steps file")


def test_a_folder_cannot_be_read(tmp_path):
    with pytest.raises(MemlensError, match=re.escape(f"{tmp_path}: cannot read steps file (")):
        read_text(tmp_path, "steps file")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs POSIX permissions and a non-root user")
def test_an_unreadable_file_is_named(tmp_path):
    path = tmp_path / "locked.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    path.chmod(0)
    try:
        with pytest.raises(MemlensError, match=r"cannot read steps file \(Permission denied\)"):
            read_text(path, "steps file")
    finally:
        path.chmod(0o600)


def test_non_utf8_bytes_name_the_line_and_offset(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"text": "caf\xe9"}\n')
    message = f"{path}:2: steps file is not UTF-8 text (byte 0xe9 at offset 25)"
    with pytest.raises(MemlensError, match=re.escape(message)):
        read_text(path, "steps file")


def test_unique_ids_name_both_lines():
    ids = UniqueIds("q.jsonl")
    ids.add("a", 1)
    ids.add("b", 2)
    ids.add(7, 3)
    with pytest.raises(MemlensError,
                       match=re.escape("q.jsonl:5: field 'id': duplicate id 'b' (first on line 2)")):
        ids.add("b", 5)


def test_unique_ids_can_watch_another_field():
    names = UniqueIds("p.jsonl", field="name")
    names.add("x", 1)
    with pytest.raises(MemlensError, match=r"field 'name': duplicate name 'x' \(first on line 1\)"):
        names.add("x", 2)
