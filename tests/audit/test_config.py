"""AuditConfig: presets, files, flags, and clear errors for bad config files (incl. fuzzing)."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.audit import PRESETS, AuditConfig, build_config, load_config, read_config_file
from memlens.errors import MemlensError


def test_defaults_follow_the_paper():
    config = AuditConfig()
    assert (config.temperature, config.top_p, config.top_k, config.max_tokens) == (0.7, 0.98, 50, 2048)
    assert config.samples == 1 and config.n_bootstrap == 10_000


def test_quick_preset_budget_fits_ten_minutes():
    quick = build_config({"preset": "quick"})
    assert quick.model == "embedded" and quick.labeler == "embedded-abstain"
    conditions = len(quick.stimulus_categories) * quick.stimuli_per_category
    calls = quick.n_questions * (conditions + quick.samples + 1)
    assert calls == 16 * 13
    # at a pessimistic 80 tok/s with every reply at max_tokens: under 10 minutes
    assert calls * quick.max_tokens / 80 < 600


def test_file_then_flags_override(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("preset: quick\nsamples: 3\nseed: 7\n")
    config = load_config(path, {"seed": 11, "model": None})
    assert (config.samples, config.seed, config.n_questions, config.preset) == (3, 11, 16, "quick")


def test_json_config(tmp_path):
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"mode": "history", "max_tokens": 64}))
    assert load_config(path).mode == "history"


def test_unknown_key_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("sampels: 2\n")
    with pytest.raises(MemlensError, match=r"bad.yaml: unknown key 'sampels'"):
        load_config(path)


def test_bad_value_names_field():
    with pytest.raises(MemlensError, match=r"field 'samples'"):
        build_config({"samples": 0})
    with pytest.raises(MemlensError, match=r"field 'mode'"):
        build_config({"mode": "sideways"})
    with pytest.raises(MemlensError, match="unknown preset 'fast'"):
        build_config({"preset": "fast"})


def test_malformed_yaml_names_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("samples: 2\nmode: [prefix\n")
    with pytest.raises(MemlensError, match=r"broken.yaml:\d+: malformed config file"):
        read_config_file(path)


def test_non_mapping_and_missing_file(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(MemlensError, match="must hold a mapping"):
        read_config_file(path)
    with pytest.raises(MemlensError, match="absent.yaml: config file not found"):
        read_config_file(tmp_path / "absent.yaml")


def test_presets_are_valid():
    for name in PRESETS:
        assert build_config({"preset": name}).preset == name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200), suffix=st.sampled_from([".yaml", ".json", ".yml"]))
def test_fuzz_config_files_only_raise_memlens_error(tmp_path, text, suffix):
    path = tmp_path / f"fuzz{suffix}"
    path.write_text(text, encoding="utf-8")
    try:
        config = load_config(path)
    except MemlensError as error:
        assert str(error)
    else:
        assert isinstance(config, AuditConfig)


@settings(max_examples=150, deadline=None)
@given(values=st.dictionaries(
    st.sampled_from(["samples", "seed", "mode", "max_tokens", "top_p", "bogus", "preset",
                     "stimulus_categories", "temperature"]),
    st.one_of(st.none(), st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=5),
              st.lists(st.text(max_size=3), max_size=2))))
def test_fuzz_config_values_only_raise_memlens_error(values):
    try:
        build_config(values)
    except MemlensError as error:
        assert str(error)
