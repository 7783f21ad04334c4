"""Bundled ontologies and validation of user ontology files."""

import json

import pytest

from memlens.errors import MemlensError
from memlens.ontology import ALT_ONTOLOGY, UNLABELED, load_ontology

ROOTS = ["Social", "Practical", "Protective", "Personal"]


def _toy() -> dict:
    return {
        "name": "toy", "version": "0.1",
        "roots": [{"id": "A", "definition": "root a"}, {"id": "B", "definition": "root b"}],
        "symbols": [
            {"id": "a.one", "root": "A", "name": "One", "definition": "first"},
            {"id": "b.two", "root": "B", "name": "Two", "definition": "second",
             "triggers": {"modal_verbs": ["must"], "action_verbs": [], "cue_phrases": []}},
        ],
    }


def _write(tmp_path, data, name="ont.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_bundled_ontology_has_4_roots_11_complete_symbols():
    ontology = load_ontology()
    assert ontology.root_ids == ROOTS
    assert len(ontology.symbols) == 11
    per_root = {root: sum(s.root == root for s in ontology.symbols) for root in ROOTS}
    assert per_root == {"Social": 3, "Practical": 3, "Protective": 3, "Personal": 2}
    for symbol in ontology.symbols:
        assert symbol.id.startswith(symbol.root.lower() + ".")
        assert len(symbol.examples) >= 5
        assert symbol.include and symbol.exclude
        assert symbol.triggers.action_verbs and symbol.triggers.cue_phrases
        # boundary rules name real neighbours
        for rule in symbol.exclude:
            named = [token.strip(".,()") for token in rule.split() if "." in token.strip(".")]
            assert all(token in ontology.symbol_ids or token == "symbol" for token in named), rule


def test_alt_ontology_same_ids_different_wording():
    original, alt = load_ontology(), load_ontology(ALT_ONTOLOGY)
    assert alt.symbol_ids == original.symbol_ids
    assert [s.root for s in alt.symbols] == [s.root for s in original.symbols]
    for a, b in zip(original.symbols, alt.symbols, strict=True):
        assert a.definition != b.definition
    assert alt.content_hash() != original.content_hash()


def test_root_of_and_hash_is_stable():
    ontology = load_ontology()
    assert ontology.root_of("protective.legal_institutional_risk") == "Protective"
    assert ontology.root_of(UNLABELED) == UNLABELED
    assert load_ontology().content_hash() == ontology.content_hash()
    with pytest.raises(KeyError):
        ontology.root_of("nope")


def test_user_json_and_yaml_with_any_number_of_symbols(tmp_path):
    import yaml

    ontology = load_ontology(_write(tmp_path, _toy()))
    assert ontology.symbol_ids == ["a.one", "b.two"]
    yaml_path = tmp_path / "ont.yaml"
    yaml_path.write_text(yaml.safe_dump(_toy()))
    assert load_ontology(yaml_path).content_hash() == ontology.content_hash()


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (lambda d: d["symbols"].append(dict(d["symbols"][0])), "duplicate symbol id 'a.one'"),
        (lambda d: d["symbols"][1].update(root="Z"), "symbols.1.root: unknown root 'Z'"),
        (lambda d: d["symbols"][0].update(definition="  "),
         "field symbols.0.definition (symbol 'a.one'): definition must not be empty"),
        (lambda d: d["symbols"][0].pop("name"), "field symbols.0.name (symbol 'a.one'): Field required"),
        (lambda d: d["symbols"][0].update(colour="red"), "symbols.0.colour"),
        (lambda d: d.update(symbols=[]), "at least one symbol"),
        (lambda d: d["roots"].append({"id": "A", "definition": "again"}), "duplicate root id 'A'"),
        (lambda d: d["symbols"][0].update(id="unlabeled"), "must not contain spaces or be 'unlabeled'"),
        (lambda d: d["symbols"][1]["triggers"].update(modal_verbs="must"), "triggers.modal_verbs"),
    ],
)
def test_malformed_ontology_names_file_and_field(tmp_path, mutate, expected):
    data = _toy()
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(MemlensError) as caught:
        load_ontology(path)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)


def test_broken_json_yaml_and_missing_file(tmp_path):
    with pytest.raises(MemlensError, match=r":2: invalid JSON"):
        load_ontology(_write(tmp_path, '{"name": "x",\n "roots": [}'))
    with pytest.raises(MemlensError, match=r"invalid YAML"):
        load_ontology(_write(tmp_path, "roots: [\n  - a: b\n bad", name="x.yaml"))
    with pytest.raises(MemlensError, match=r"must be a mapping"):
        load_ontology(_write(tmp_path, "[1, 2]"))
    with pytest.raises(MemlensError, match=r"missing.json: ontology file not found"):
        load_ontology(tmp_path / "missing.json")


def test_ontology_file_that_is_not_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('{"name": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(MemlensError, match=r"latin1.json:1: ontology file is not UTF-8"):
        load_ontology(path)
