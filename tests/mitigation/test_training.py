"""CPU smoke trainings on a tiny model built in code: GRPO (format + DTW rewards) and DPO run a
few steps, losses are finite, checkpoints are written, rewards are logged; settings resolve."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("trl")

from memlens.cli.main import main  # noqa: E402
from memlens.errors import MemlensError  # noqa: E402
from memlens.mitigation.config import (  # noqa: E402
    DPOSettings,
    GRPOSettings,
    resolve_settings,
    to_trl_kwargs,
)

CPU = {"cuda": False, "bf16": False, "vllm": False}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import torch
    from tests.mitigation.tiny_model import build_tiny_model

    torch.set_num_threads(1)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def grpo_rows(count: int = 8) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"Question {i}: should I split the rent?"}],
             "reference": json.dumps(["social.fairness_reciprocity", "practical.resources_cost"])}
            for i in range(count)]


def dpo_rows(count: int = 8) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"Question {i}: move cities?"}],
             "chosen": [{"role": "assistant", "content":
                         "<think><step_1>Plan the steps.</step_1></think><answer>Yes.</answer>"}],
             "rejected": [{"role": "assistant", "content": "As a teacher, maybe."}]}
            for i in range(count)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_grpo_smoke_via_cli(tiny_model, tmp_path):
    data = write_jsonl(tmp_path / "grpo.jsonl", grpo_rows(10))
    out = tmp_path / "grpo"
    status = main(["mitigate", "grpo", "--model", str(tiny_model), "--data", str(data),
                   "--output", str(out), "--labeler", "keyword", "--rewards", "dtw+sri+fmt",
                   "--max-steps", "2", "--per-device-train-batch-size", "4",
                   "--max-completion-length", "16", "--logging-steps", "1", "--save-steps", "2"])
    assert status == 0
    summary = json.loads((out / "training_summary.json").read_text())
    steps = [row for row in summary["log_history"] if "loss" in row]
    assert len(steps) == 2 and all(math.isfinite(row["loss"]) for row in steps)
    for name in ("format_reward", "dtw_reward", "sri_reward"):
        values = [row[f"rewards/{name}/mean"] for row in steps]
        assert all(math.isfinite(v) for v in values)
    # a random tiny model writes no tags: r_fmt 0; DTW reward in [−1, 0]
    assert all(row["rewards/format_reward/mean"] == 0.0 for row in steps)
    assert all(-1.0 <= row["rewards/dtw_reward/mean"] <= 0.0 for row in steps)
    assert summary["train_rows"] == 8 and summary["test_rows"] == 2  # 80/20
    assert summary["settings"]["beta"] == 0.01
    assert (out / "checkpoint-2" / "model.safetensors").exists()
    assert (out / "model.safetensors").exists() and (out / "tokenizer.json").exists()


def test_dpo_smoke_changes_weights(tiny_model, tmp_path):
    import torch
    from datasets import Dataset
    from safetensors.torch import load_file

    from memlens.mitigation.train import train_dpo

    settings = DPOSettings(max_steps=3, per_device_train_batch_size=2,
                           gradient_accumulation_steps=1, logging_steps=1, save_steps=3,
                           max_length=64, learning_rate=1e-3, warmup_ratio=0.0)
    result = train_dpo(str(tiny_model), Dataset.from_list(dpo_rows()), tmp_path / "dpo", settings)
    losses = [row["loss"] for row in result.log_history if "loss" in row]
    assert len(losses) == 3 and all(math.isfinite(loss) for loss in losses)
    assert losses[0] == pytest.approx(math.log(2), abs=1e-4)  # π = π_ref at step 1
    assert (tmp_path / "dpo" / "checkpoint-3").is_dir()
    before = load_file(str(tiny_model / "model.safetensors"))
    after = load_file(str(tmp_path / "dpo" / "model.safetensors"))
    assert any(not torch.equal(before[name], after[name]) for name in before)


def test_grpo_lora_runs(tiny_model, tmp_path):
    from datasets import Dataset

    from memlens.mitigation.rewards import format_reward
    from memlens.mitigation.train import train_grpo

    settings = GRPOSettings(max_steps=1, per_device_train_batch_size=4, lora=True, lora_r=4,
                            max_completion_length=8, logging_steps=1, save_steps=10)
    result = train_grpo(str(tiny_model), Dataset.from_list(grpo_rows()), tmp_path / "lora",
                        settings, rewards=[format_reward])
    assert (tmp_path / "lora" / "adapter_config.json").exists()
    assert "rewards/format_reward/mean" in result.log_history[0]


def test_paper_defaults_reach_trl():
    grpo = to_trl_kwargs(GRPOSettings(), "out", CPU)
    assert (grpo["num_generations"], grpo["temperature"], grpo["num_train_epochs"],
            grpo["per_device_train_batch_size"], grpo["max_completion_length"], grpo["beta"],
            grpo["use_vllm"], grpo["use_cpu"], grpo["bf16"]) == (4, 1.0, 3.0, 8, 1024, 0.01,
                                                                  False, True, False)
    dpo = to_trl_kwargs(DPOSettings(), "out", {"cuda": True, "bf16": True, "vllm": False})
    assert (dpo["loss_type"], dpo["learning_rate"], dpo["lr_scheduler_type"],
            dpo["warmup_steps"], dpo["bf16"], dpo["max_length"],
            dpo["per_device_train_batch_size"], dpo["gradient_accumulation_steps"],
            dpo["save_steps"], dpo["logging_steps"]) == ("sigmoid", 5e-6, "cosine", 0.1, True,
                                                         1024, 1, 16, 500, 10)


def test_yaml_then_flags_then_set(tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text("beta: 0.05\nnum_generations: 8\nextra: {weight_decay: 0.1}\n")
    settings = resolve_settings(GRPOSettings, config, {"beta": "0.02", "seed": None},
                                {"optim": "adamw_torch"})
    assert (settings.beta, settings.num_generations, settings.seed) == (0.02, 8, 0)
    assert settings.extra == {"weight_decay": 0.1, "optim": "adamw_torch"}


@pytest.mark.parametrize(("text", "message"), [
    ("bogus_field: 1\n", "unknown setting 'bogus_field'"),
    ("num_generations: four\n", "'num_generations' expects int"),
    ("- a list\n", "expected a mapping"),
])
def test_bad_config_file(tmp_path, text, message):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    with pytest.raises(MemlensError, match=message):
        resolve_settings(GRPOSettings, config)


def test_cli_dry_run_and_bad_flags(tmp_path, capsys):
    assert main(["mitigate", "dpo", "--model", "m", "--data", "d", "--output",
                 str(tmp_path / "o"), "--beta", "0.2", "--dry-run"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["trl"]["beta"] == 0.2 and printed["trl"]["loss_type"] == ["sigmoid"]
    assert main(["mitigate", "grpo", "--model", "m", "--data", "d", "--output", "o",
                 "--beta", "high"]) == 2
    assert "--beta: setting 'beta' expects float" in capsys.readouterr().err
    assert main(["mitigate", "grpo", "--model", "m", "--data", str(tmp_path / "none.jsonl"),
                 "--output", "o", "--rewards", "fmt"]) == 2
    assert "training data not found" in capsys.readouterr().err
    assert main(["mitigate", "grpo", "--model", "m", "--data", "d", "--output", "o",
                 "--use-vllm", "true", "--dry-run"]) == 2
    assert "needs the 'vllm' package" in capsys.readouterr().err


def test_shipped_training_configs_match_the_defaults():
    from importlib import resources

    folder = resources.files("memlens.data").joinpath("training")
    assert resolve_settings(GRPOSettings, str(folder / "grpo_paper.yaml")) == GRPOSettings()
    assert resolve_settings(DPOSettings, str(folder / "dpo_paper.yaml")) == DPOSettings()
    zero3 = json.loads((folder / "deepspeed_zero3.json").read_text())
    assert zero3["zero_optimization"]["stage"] == 3
    assert "num_processes: 8" in (folder / "accelerate_8gpu_zero3.yaml").read_text()


def test_config_file_that_is_not_utf8_is_a_clear_error(tmp_path):
    config = tmp_path / "latin1.yaml"
    config.write_bytes("learning_rate: 5e-6  # r\xe9glage\n".encode("latin-1"))
    with pytest.raises(MemlensError, match=r"latin1.yaml:1: training config is not UTF-8"):
        resolve_settings(GRPOSettings, config)
