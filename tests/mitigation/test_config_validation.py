"""The mitigation configs are pydantic dataclasses: a wrong type or an out-of-range value is
refused when the config is constructed, with a message naming the class (or the YAML file / the
flag) and the field; the records written to manifests and reports are what they were before
pydantic (hard-coded below from the plain dataclasses), so existing run directories resume."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from memlens.errors import MemlensError
from memlens.mitigation.config import DPOSettings, GRPOSettings, resolve_settings, to_trl_kwargs
from memlens.mitigation.evaluate import EvalConfig, config_record
from memlens.mitigation.references import ReferenceConfig
from memlens.mitigation.sympref import SymPrefConfig
from memlens.runmanifest import open_run_manifest
from memlens.store import RunStore

CPU = {"cuda": False, "bf16": False, "vllm": False}
GPU = {"cuda": True, "bf16": True, "vllm": False}


@pytest.mark.parametrize(("build", "message"), [
    (lambda: GRPOSettings(learning_rate=-1),
     "GRPOSettings: setting 'learning_rate' must be a finite number > 0 and <= 1, got -1.0"),
    (lambda: GRPOSettings(num_generations="four"),
     "GRPOSettings: setting 'num_generations' expects int, got 'four'"),
    (lambda: GRPOSettings(use_vllm="maybe"),
     "GRPOSettings: setting 'use_vllm' expects bool | None, got 'maybe'"),
    (lambda: DPOSettings(warmup_ratio=1.5),
     "DPOSettings: setting 'warmup_ratio' must be a finite number >= 0 and <= 1, got 1.5"),
    (lambda: DPOSettings(lora=None), "DPOSettings: setting 'lora' needs a value"),
    (lambda: ReferenceConfig(candidates="four"),
     "ReferenceConfig: field 'candidates': Input should be a valid integer, unable to parse "
     "string as an integer (got 'four')"),
    (lambda: ReferenceConfig(temperature=9.0),
     "ReferenceConfig: field 'temperature': Input should be less than or equal to 5 (got 9.0)"),
    (lambda: ReferenceConfig(test_fraction=1.0),
     "ReferenceConfig: field 'test_fraction': Input should be less than 1 (got 1.0)"),
    (lambda: SymPrefConfig(samples_per_arm=[5]),
     "SymPrefConfig: field 'samples_per_arm': Input should be a valid integer (got [5])"),
    (lambda: SymPrefConfig(top_p=0.0),
     "SymPrefConfig: field 'top_p': Input should be greater than 0 (got 0.0)"),
    (lambda: SymPrefConfig(pairs_per_prompt=-1),
     "SymPrefConfig: field 'pairs_per_prompt': Input should be greater than or equal to 0 "
     "(got -1)"),
    (lambda: EvalConfig(models=["base"], data="d", top_k="many"),
     "EvalConfig: field 'top_k': Input should be a valid integer, unable to parse string as an "
     "integer (got 'many')"),
    (lambda: EvalConfig(models=["base"], data="d", max_tokens=0),
     "EvalConfig: field 'max_tokens': Input should be greater than or equal to 1 (got 0)"),
    (lambda: EvalConfig(models=[], data="d"),
     "EvalConfig: field 'models': List should have at least 1 item after validation, not 0 "
     "(got [])"),
])
def test_construction_refuses_wrong_types_and_ranges(build, message):
    with pytest.raises(MemlensError) as caught:
        build()
    assert str(caught.value) == message


def test_unknown_fields_are_refused_and_named():
    with pytest.raises(MemlensError, match=r"^SymPrefConfig: unknown key 'sample_per_arm' "
                                           r"\(valid keys: model, judge, "):
        SymPrefConfig(sample_per_arm=3)
    with pytest.raises(MemlensError, match=r"^GRPOSettings: unknown setting 'kl' \(known: beta, "):
        GRPOSettings(kl=0.1)


def test_replace_is_validated_and_values_are_converted(tmp_path):
    with pytest.raises(MemlensError, match="field 'limit'"):
        dataclasses.replace(ReferenceConfig(), limit=0)
    # a Path is kept as its text (the manifest records text); "5e-6" (YAML: a string) is a float
    assert ReferenceConfig(questions=tmp_path / "q.jsonl").questions == str(tmp_path / "q.jsonl")
    assert GRPOSettings(learning_rate="5e-6").learning_rate == 5e-6


def test_yaml_settings_name_the_file_and_field(tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("lora_r: 0\nbeta: 0.02\n")
    with pytest.raises(MemlensError) as caught:
        resolve_settings(GRPOSettings, config)
    assert str(caught.value) == (f"{config}: field 'lora_r': setting 'lora_r' must be a finite "
                                 "number >= 1 and <= 4096, got 0")
    # the file's bad value is refused even when a flag replaces it; a flag's own is named by it
    with pytest.raises(MemlensError, match=re.escape(f"{config}: field 'lora_r'")):
        resolve_settings(GRPOSettings, config, {"lora_r": "8"})
    config.write_text("beta: 0.02\n")
    with pytest.raises(MemlensError) as caught:
        resolve_settings(GRPOSettings, config, {"num_generations": "1", "seed": "-3"})
    assert str(caught.value) == (  # every problem, in field order
        "--seed: setting 'seed' must be a finite number >= 0 and <= 4.29497e+09, got -3; "
        "--num-generations: setting 'num_generations' must be a finite number >= 2 and <= 1024, "
        "got 1")
    assert resolve_settings(GRPOSettings, config, {"use_vllm": "auto", "lora": "yes"}) == \
        GRPOSettings(beta=0.02, lora=True)


# -- records: what the plain dataclasses produced for the defaults ---------------------------

REFERENCES_RECORD = {
    "model": "embedded", "judge": None, "labeler": "embedded", "candidates": 4,
    "questions": None, "stimuli": None, "limit": None, "seed": 0, "temperature": 0.7,
    "max_tokens": 1024, "test_fraction": 0.2}
SYMPREF_RECORD = {
    "model": "embedded", "judge": None, "rewriter": None, "personas": None,
    "personas_per_question": 3, "samples_per_arm": 5, "temperature": 1.0, "top_p": 0.95,
    "pairs_per_prompt": 1, "questions": None, "limit": None, "seed": 0, "max_tokens": 1024,
    "mix": None, "mix_fraction": 0.5, "max_length_difference": 20, "test_fraction": 0.2}
EVAL_RECORD = {
    "models": ["base", "tuned"], "data": "held_out", "labeler": "embedded", "judge": None,
    "lm_eval_tasks": [], "lm_eval_limit": None, "lm_eval_data": None, "lm_eval_files": {},
    "lm_eval_max_tokens": 256, "limit": None, "seed": 0, "max_tokens": 1024,
    "temperature": 0.7, "top_p": 0.98, "top_k": 50}
SHARED_SETTINGS = {
    "num_train_epochs": 3.0, "learning_rate": 1e-06, "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1, "max_steps": -1, "logging_steps": 10, "save_steps": 500,
    "seed": 0, "bf16": None, "lora": False, "lora_r": 16, "lora_alpha": 32,
    "lora_dropout": 0.05, "deepspeed": None, "extra": {}}
GRPO_RECORD = {
    **SHARED_SETTINGS, "num_generations": 4, "temperature": 1.0, "max_prompt_length": 640,
    "max_completion_length": 1024, "beta": 0.01, "loss_type": "grpo", "scale_rewards": "group",
    "rewards": "dtw+fmt", "labeler": "embedded", "reference_column": "reference",
    "use_vllm": None, "vllm_mode": "colocate"}
DPO_RECORD = {
    **SHARED_SETTINGS, "learning_rate": 5e-06, "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 16, "loss_type": "sigmoid", "beta": 0.1,
    "lr_scheduler_type": "cosine", "warmup_ratio": 0.1, "max_length": 1024}
GRPO_TRL_CPU = {
    "num_train_epochs": 3.0, "learning_rate": 1e-06, "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1, "max_steps": -1, "logging_steps": 10, "save_steps": 500,
    "seed": 0, "bf16": False, "num_generations": 4, "temperature": 1.0,
    "max_completion_length": 1024, "beta": 0.01, "loss_type": "grpo", "scale_rewards": "group",
    "use_vllm": False, "output_dir": "out", "use_cpu": True, "report_to": "none",
    "save_strategy": "steps", "activation_checkpointing": False}
DPO_TRL_GPU = {
    "num_train_epochs": 3.0, "learning_rate": 5e-06, "per_device_train_batch_size": 1,
    "gradient_accumulation_steps": 16, "max_steps": -1, "logging_steps": 10, "save_steps": 500,
    "seed": 0, "bf16": True, "loss_type": "sigmoid", "beta": 0.1, "lr_scheduler_type": "cosine",
    "max_length": 1024, "warmup_steps": 0.1, "output_dir": "out", "use_cpu": False,
    "report_to": "none", "save_strategy": "steps", "activation_checkpointing": False}


@pytest.mark.parametrize(("record", "expected"), [
    (lambda: dataclasses.asdict(ReferenceConfig()), REFERENCES_RECORD),
    (lambda: dataclasses.asdict(SymPrefConfig()), SYMPREF_RECORD),
    (lambda: config_record(EvalConfig(models=["base", "tuned"], data="held_out")), EVAL_RECORD),
    (lambda: dataclasses.asdict(GRPOSettings()), GRPO_RECORD),
    (lambda: dataclasses.asdict(DPOSettings()), DPO_RECORD),
    (lambda: to_trl_kwargs(GRPOSettings(), "out", CPU), GRPO_TRL_CPU),
    (lambda: to_trl_kwargs(DPOSettings(), "out", GPU), DPO_TRL_GPU),
])
def test_records_serialise_as_before(record, expected):
    made = record()
    # same keys in the same order, same values and types: the same JSON text
    assert json.dumps(made) == json.dumps(expected)


def test_a_run_recorded_before_pydantic_resumes(tmp_path):
    for section, old, new in [("references", REFERENCES_RECORD, ReferenceConfig()),
                              ("sympref", SYMPREF_RECORD, SymPrefConfig())]:
        with RunStore(tmp_path / section) as store:
            open_run_manifest(store, section, old)  # as the plain dataclass wrote it
            open_run_manifest(store, section, dataclasses.asdict(new))  # no "different settings"
            changed = dataclasses.asdict(dataclasses.replace(new, seed=1))
            with pytest.raises(MemlensError, match=r"different settings \(seed\)"):
                open_run_manifest(store, section, changed)
