"""luke_allennlp/experiments/seeds.py and runs.py: which seeds a config has, the state of a seed's run, the plan of a
seeds directory, where the runs go."""

import json

import pytest

from luke_allennlp.experiments import runs
from luke_allennlp.experiments.seeds import (
    SeedsError,
    check_plan,
    merged_overrides,
    parse_seeds,
    resolved_config,
    seed_overrides,
    state_of,
)
from tests.conftest import REPO_ROOT


def test_parse_seeds():
    assert parse_seeds("3") == [1, 2, 3] and parse_seeds("13,42,7") == [13, 42, 7] and parse_seeds("5,") == [5]
    for bad in ("0", "a", "1,1"):
        with pytest.raises(SeedsError, match=f"--seeds {bad}: "):
            parse_seeds(bad)


def test_every_seed_of_a_config_is_varied_but_the_validation_data(monkeypatch):
    """The pretraining config: allennlp's three seeds and the training reader's mask seed; not the validation
    reader's (every run scored on the same masks)."""
    monkeypatch.setenv("MODEL_NAME", "roberta-base")
    monkeypatch.setenv("CORPUS", "output/corpus")
    config = resolved_config(str(REPO_ROOT / "configs" / "pretraining" / "luke_base.jsonnet"), None)
    assert config["validation_dataset_reader"]["seed"] == config["dataset_reader"]["seed"] == 13370
    overrides = seed_overrides(config, 7)
    assert overrides == {"random_seed": 7, "numpy_seed": 7, "pytorch_seed": 7, "dataset_reader.seed": 7}
    assert merged_overrides('{"trainer.num_epochs": 1, "random_seed": 3}', overrides) == {
        "trainer.num_epochs": 1,
        **overrides,
    }


def test_the_state_of_a_seed_run(tmp_path):
    run = tmp_path / "seed-1"
    assert state_of(str(run)) == "new"
    run.mkdir()
    (run / ".lock").touch()
    assert state_of(str(run)) == "new"
    (run / "config.json").touch()
    assert state_of(str(run)) == "restart"  # stopped before its first checkpoint
    (run / "training_state_e1_b0.th").touch()
    assert state_of(str(run)) == "recover"
    (run / "metrics.json").touch()
    assert state_of(str(run)) == "recover"  # (the archive is written after metrics.json)
    (run / "model.tar.gz").touch()
    assert state_of(str(run)) == "finished"


def test_a_seeds_directory_keeps_its_config(tmp_path):
    config = {"trainer": {"num_epochs": 3, "optimizer": {"lr": 0.1}}, "train_data_path": "a"}
    check_plan(str(tmp_path), "c.jsonnet", config)
    assert json.loads((tmp_path / "seeds.json").read_text())["config"] == config
    check_plan(str(tmp_path), "c.jsonnet", config)  # the same: resumed
    other = {"trainer": {"num_epochs": 4, "optimizer": {"lr": 0.1}}, "validation_data_path": "b"}
    with pytest.raises(SeedsError) as error:
        check_plan(str(tmp_path), "d.jsonnet", other)
    assert str(error.value) == (
        f'{tmp_path} holds the seeds of another configuration (c.jsonnet): train_data_path: "a" before, '
        '"(unset)" now; trainer.num_epochs: 3 before, 4 now; validation_data_path: "(unset)" before, "b" now. Run '
        "with the same config and -o to resume, -f to start it over, or another -s"
    )
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "seed-1").mkdir()
    with pytest.raises(SeedsError, match="holds runs \\(seed-1\\) but no seeds.json: not a seeds directory"):
        check_plan(str(tmp_path / "other"), "c.jsonnet", config)


def test_runs_go_one_per_gpu_or_share_the_cpu(monkeypatch):
    monkeypatch.setattr(runs, "cpu_count", lambda: 8)
    monkeypatch.setattr(runs, "visible_gpus", lambda: [])
    auto = {"trainer": {"cuda_device": "auto"}}
    assert runs.devices(auto, 5) == [runs.Device(threads=4)] * 2  # one run per 4 cores
    assert runs.devices(auto, 1, jobs=3) == [runs.Device(threads=2)]  # threads as for 3 at once, however many left
    assert runs.devices(auto, 5, jobs=1)[0].environment() == {"OMP_NUM_THREADS": "8", "MKL_NUM_THREADS": "8"}
    monkeypatch.setattr(runs, "visible_gpus", lambda: ["2", "5"])
    assert runs.devices(auto, 5) == [runs.Device(gpu="2"), runs.Device(gpu="5")]
    assert runs.devices(auto, 5, jobs=1) == [runs.Device(gpu="2")]
    assert runs.devices(auto, 5)[1].environment() == {"CUDA_VISIBLE_DEVICES": "5"}
    assert runs.devices({"trainer": {"cuda_device": -1}}, 2, jobs=2) == [runs.Device(threads=4)] * 2
    assert runs.devices({"trainer": {"cuda_device": 1}}, 5) == [runs.Device()]  # as the config says, one at a time
    assert runs.devices({**auto, "distributed": {"cuda_devices": [0, 1]}}, 5) == [runs.Device()]
    with pytest.raises(ValueError, match="--jobs must be at least 1, not 0"):
        runs.devices(auto, 5, jobs=0)
