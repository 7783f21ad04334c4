"""Quality checks of the shipped sample (src/memlens/data/tooldrift): 35 project-written entries,
one per bias dimension × domain, schema-valid, with rubrics, no duplicates."""

import json
from collections import Counter

from memlens.tooldrift import BIAS_DIMENSIONS, bundled_path, load_dataset
from memlens.tooldrift.schema import DOMAINS

DATA = load_dataset()  # validates every entry, rubric and rubric-vs-schema match


def test_every_dimension_times_domain_once():
    cells = Counter((e.bias_dimension, e.domain) for e in DATA.entries.values())
    assert set(cells) == {(d, m) for d in BIAS_DIMENSIONS for m in DOMAINS}
    assert set(cells.values()) == {1} and len(DATA.entries) == 35
    assert set(DATA.rubrics) == set(DATA.entries)


def test_no_duplicates():
    entries = list(DATA.entries.values())
    for field in ("user_prompt", "tool_name", "base_user_memory"):
        values = [getattr(e, field) for e in entries]
        assert len(set(values)) == len(values), field
    memories = [m for e in entries for m in (*e.biased_user_memory, *e.neutral_user_memory)]
    assert len(set(memories)) == len(memories)
    for path in (bundled_path() / "scenarios").glob("*.json"):
        keys = [(e["domain"], e["scenario_num"]) for e in json.loads(path.read_text())]
        assert len(set(keys)) == len(keys), path


def test_entries_follow_the_published_schema():
    card_fields = {"bias_dimension", "domain", "scenario_num", "attempt_num", "base_user_memory",
                   "biased_user_memory", "neutral_user_memory", "user_prompt",
                   "function_tool_call", "expected_behavior_without_bias",
                   "expected_behavior_with_bias"}
    for path in (bundled_path() / "scenarios").glob("*.json"):
        for raw in json.loads(path.read_text()):
            assert set(raw) == card_fields, (path, raw.get("domain"))
            assert raw["bias_dimension"] == path.stem
    for entry in DATA.entries.values():
        assert len(entry.biased_user_memory) == 3 and len(entry.neutral_user_memory) == 3
        assert not entry.extras


def test_rubrics_are_usable():
    for key, rubric in DATA.rubrics.items():
        entry = DATA.entries[key]
        properties = entry.parameters_schema["properties"]
        assert len(rubric.params) >= 2 and {s.kind for s in rubric.params.values()} <= {
            "enum", "boolean", "numeric"}
        for name, spec in rubric.params.items():
            assert "default" in properties[name], (key, name)  # a missing argument is scorable
            if spec.kind == "enum":
                assert set(spec.order) == set(properties[name]["enum"]), (key, name)
            if spec.kind == "numeric":
                assert properties[name]["type"] in ("integer", "number")
        # the expected behaviours name the rubric parameters
        assert any(name in entry.expected_behavior_with_bias for name in rubric.params), key
