"""The pretraining configs: Table 9's hyper-parameters, a few CPU steps of each (stage 2 from stage 1's
archive), and distributed pretraining with two CPU processes through the `allennlp` command."""

import json
import os
import subprocess
import sys

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params

from tests.conftest import REPO_ROOT
from tests.models.test_luke_pretraining import TINY
from tests.training.host_syncs import AUDIT

CONFIGS = sorted((REPO_ROOT / "configs" / "pretraining").glob("*.jsonnet"))
# Table 9 / Appendix A: (peak learning rate, optimizer steps, stage-1 freezing) per config.
SCHEDULES = {
    "luke_base": (1e-5, 200_000, False),
    "luke_base_stage1": (5e-4, 100_000, True),
    "luke_base_stage2": (1e-5, 100_000, False),
}
WORD_SIDE = ("pretraining.luke.embeddings.", "pretraining.luke.encoder.", "pretraining.lm_head.")


def set_env(monkeypatch, model_dir, corpus, stage1_archive="unused"):
    monkeypatch.setenv("MODEL_NAME", str(model_dir))
    monkeypatch.setenv("CORPUS", str(corpus))
    monkeypatch.setenv("STAGE1_ARCHIVE", str(stage1_archive))


def test_every_pretraining_config_is_covered():
    assert sorted(p.stem for p in CONFIGS) == sorted(SCHEDULES)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_table_9_hyper_parameters(config, monkeypatch, tmp_path):
    set_env(monkeypatch, tmp_path, tmp_path)
    monkeypatch.setenv("NUM_GPUS", "8")  # the paper's machine
    params = Params.from_file(str(config)).as_dict()
    lr, steps, frozen = SCHEDULES[config.stem]
    trainer, loader = params["trainer"], params["data_loader"]
    devices = params["distributed"]["cuda_devices"]
    accumulation = trainer["num_gradient_accumulation_steps"]
    assert loader["batch_size"] * len(devices) * accumulation == 2048
    # GPUs, bf16 autocast there ("auto"), one all-reduce per optimizer step (the luke_gradient_descent trainer).
    assert devices == list(range(8)) and (trainer["type"], trainer["precision"]) == ("luke_gradient_descent", "auto")
    steps_per_epoch = loader["batches_per_epoch"] // accumulation
    assert trainer["num_epochs"] * steps_per_epoch == steps
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup", "warmup_steps": 2500}
    optimizer = trainer["optimizer"]
    assert (optimizer["type"], optimizer["lr"], optimizer["betas"], optimizer["eps"], optimizer["weight_decay"]) == (
        "luke_adamw",
        lr,
        [0.9, 0.999],
        1e-6,
        0.01,
    )
    assert "grad_norm" not in trainer and "grad_clipping" not in trainer  # Table 9: no gradient clipping
    reader = params["dataset_reader"]
    assert (reader["masked_lm_prob"], reader["masked_entity_prob"], reader["whole_word_masking"]) == (0.15, 0.15, True)
    assert loader["max_instances_in_memory"] > 0  # lazy: new masks on every pass
    assert params["model"].get("freeze_checkpoint_weights", False) == frozen  # stage 1: the model freezes
    if config.stem == "luke_base_stage2":
        assert params["model"]["type"] == "from_archive"
    else:
        assert params["model"]["config_overrides"]["hidden_dropout_prob"] == 0.1


@pytest.mark.parametrize(
    "gpus, devices, accumulation", [("0", None, 128), ("1", None, 128), ("2", [0, 1], 64), ("4", [0, 1, 2, 3], 32)]
)
def test_the_number_of_gpus_is_the_machines_or_num_gpus(monkeypatch, tmp_path, gpus, devices, accumulation):
    """One process per GPU (distributed from 2 on), 2,048 sequences a step however many; without NUM_GPUS in the
    environment, the machine's count (the compat layer gives it: 0 here)."""
    set_env(monkeypatch, tmp_path, tmp_path)
    monkeypatch.setenv("NUM_GPUS", gpus)
    params = Params.from_file(str(CONFIGS[0])).as_dict()
    assert params.get("distributed", {}).get("cuda_devices") == devices
    assert params["trainer"]["num_gradient_accumulation_steps"] == accumulation
    assert params["trainer"]["cuda_device"] == "auto"
    monkeypatch.setenv("NUM_GPUS", "3")
    with pytest.raises(RuntimeError, match=r"batch_size_per_device \(16\) x number of GPUs \(3\) must divide 2048"):
        Params.from_file(str(CONFIGS[0]))
    monkeypatch.delenv("NUM_GPUS")
    assert "distributed" not in Params.from_file(str(CONFIGS[0])).as_dict()  # this machine: no GPU


@pytest.mark.parametrize(
    "memory, gpus, micro, accumulation",
    [
        ("0", "1", 16, 128),
        ("15", "1", 16, 128),
        ("23", "1", 32, 64),
        ("39", "8", 64, 4),
        ("79", "8", 128, 2),
        ("139", "1", 128, 16),
    ],
)
def test_the_micro_batch_follows_the_gpus_memory(monkeypatch, tmp_path, memory, gpus, micro, accumulation):
    """The largest micro-batch the memory estimate fits (GPU_MEMORY_GIB: the machine's unless set, 0 here), 2,048
    sequences a step whatever it is; `batch_size_per_device` sets it outright."""
    set_env(monkeypatch, tmp_path, tmp_path)
    monkeypatch.setenv("NUM_GPUS", gpus)
    monkeypatch.setenv("GPU_MEMORY_GIB", memory)
    params = Params.from_file(str(CONFIGS[0])).as_dict()
    assert params["data_loader"]["batch_size"] == micro
    assert params["trainer"]["num_gradient_accumulation_steps"] == accumulation
    assert micro * int(gpus) * accumulation == 2048
    config = tmp_path / "set.jsonnet"
    config.write_text(
        f"local lib = import '{REPO_ROOT}/configs/lib/pretraining.libsonnet';\n"
        "lib.config(lib.model('m', 'c'), 'c', lr=1e-5, steps=1000, batch_size_per_device=8)"
    )
    assert Params.from_file(str(config)).as_dict()["data_loader"]["batch_size"] == 8


def weights(path):
    return torch.load(path, map_location="cpu", weights_only=True)


def roberta_start(model_dir):
    """The weights pretraining starts from; those not drawn at random (the word side, what the entity side copies
    from it, zero- or one-initialised biases and norms) are those of every run."""
    from luke_allennlp.modeling import LukeForPretraining

    model = LukeForPretraining.from_pretrained(str(model_dir), entity_vocab_size=60, use_entity_aware_attention=False)
    return {"pretraining." + k: v for k, v in model.state_dict().items()}


def test_stage1_then_stage2(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path, monkeypatch):
    """Stage 1 trains the entity side only; stage 2 starts from its archive and trains everything."""
    from allennlp.data import Vocabulary
    from allennlp.models import Model

    set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus)
    overrides = {**TINY, "trainer.optimizer.lr": 1e-2, "trainer.num_epochs": 2}
    train_model_from_file(str(CONFIGS[1]), str(tmp_path / "stage1"), overrides=json.dumps(overrides))
    start = roberta_start(tiny_roberta_mlm_dir)
    epoch1, epoch2 = (
        weights(tmp_path / "stage1" / "model_state_e1_b0.th"),
        weights(tmp_path / "stage1" / "model_state_e2_b0.th"),
    )
    for name, value in epoch2.items():
        if name.startswith(WORD_SIDE):
            assert torch.equal(value, start[name]) and torch.equal(value, epoch1[name]), name  # RoBERTa's, frozen
        elif not name.startswith("pretraining.luke.pooler."):
            assert not torch.equal(value, epoch1[name]), name  # the entity side learns
    for name in ("pretraining.entity_predictions.bias", "pretraining.luke.entity_embeddings.LayerNorm.weight"):
        assert not torch.equal(epoch1[name], start[name])

    archive = tmp_path / "stage1" / "model.tar.gz"
    set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus, archive)
    loaded = Model.from_params(
        vocab=Vocabulary.empty(), params=Params({"type": "from_archive", "archive_file": str(archive)})
    )
    stage1 = weights(tmp_path / "stage1" / "best.th")
    assert all(torch.equal(v, stage1[k]) for k, v in loaded.state_dict().items())  # stage 2 starts from stage 1
    train_model_from_file(str(CONFIGS[2]), str(tmp_path / "stage2"), overrides=json.dumps(overrides))
    stage2 = weights(tmp_path / "stage2" / "best.th")
    assert [k for k, v in stage1.items() if torch.equal(v, stage2[k]) and ".pooler." not in k] == []  # all trained


def test_luke_base_trains(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path, monkeypatch):
    """A few steps, each audited: none without a report makes the host wait for a GPU (tests/training/host_syncs.py)."""
    set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus)
    train_model_from_file(str(CONFIGS[0]), str(tmp_path / "run"), overrides=json.dumps({**TINY, **AUDIT}))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_loss"] > 0 and 0.0 <= metrics["training_masked_entity_accuracy"] <= 1.0
    assert (tmp_path / "run" / "model.tar.gz").exists()


def test_distributed_pretraining_on_cpu(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path):
    """Stage 1 with two CPU processes (gloo) through the allennlp command, each with a data-loader worker reading
    its shard: the frozen word side stays as it was and the entity side learns."""
    overrides = {k: v for k, v in TINY.items() if k != "distributed"}
    overrides.update(
        {
            "distributed": {"cuda_devices": [-1, -1]},
            "trainer.num_gradient_accumulation_steps": 2,
            "data_loader.batch_size": 4,
            "data_loader.batches_per_epoch": 4,
            "data_loader.num_workers": 1,
        }
    )
    env = {**os.environ, "MODEL_NAME": str(tiny_roberta_mlm_dir), "CORPUS": str(pretraining_corpus)}
    command = [
        str(REPO_ROOT / ".venv" / "bin" / "allennlp"),
        "train",
        str(CONFIGS[1]),
        "-s",
        str(tmp_path / "run"),
        "-o",
        json.dumps(overrides),
    ]
    if not os.path.exists(command[0]):
        command[0:1] = [sys.executable, "-m", "allennlp"]
    result = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "BrokenPipeError" not in result.stderr  # the data-loader workers are stopped cleanly
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert {"peak_worker_0_memory_MB", "peak_worker_1_memory_MB"} <= set(metrics)
    start, trained = roberta_start(tiny_roberta_mlm_dir), weights(tmp_path / "run" / "best.th")
    assert all(torch.equal(trained[k], start[k]) for k in start if k.startswith(WORD_SIDE))
    assert not torch.equal(trained["pretraining.entity_predictions.bias"], start["pretraining.entity_predictions.bias"])


def test_masked_entity_accuracy_rises(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path, monkeypatch):
    """180 steps of a tiny LUKE on the test corpus (about a minute): masked-entity accuracy far above chance
    (1/60) and above always predicting the most frequent entity (16/334 = 4.8%)."""
    set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus)
    overrides = {
        **TINY,
        "data_loader.batches_per_epoch": 12,
        "trainer.num_epochs": 15,
        "trainer.optimizer.lr": 2e-3,
        "trainer.learning_rate_scheduler.warmup_steps": 10,
    }
    train_model_from_file(str(CONFIGS[0]), str(tmp_path / "run"), overrides=json.dumps(overrides))
    first = json.loads((tmp_path / "run" / "metrics_epoch_0.json").read_text())
    last = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert first["training_masked_entity_accuracy"] < 0.05
    assert last["training_masked_entity_accuracy"] > 0.25
    assert last["training_masked_entity_perplexity"] < first["training_masked_entity_perplexity"] / 3
