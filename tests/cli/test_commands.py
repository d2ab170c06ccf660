"""The real `allennlp` command through the whole layer: train, evaluate, predict, `--recover`."""

import json
import os
import shutil
import subprocess

import torch

from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT


def run_allennlp(*args, env):
    result = subprocess.run([str(ALLENNLP), *args], capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600)
    assert result.returncode == 0, f"allennlp {args[0]} failed:\n{result.stderr[-4000:]}"
    return result


def test_allennlp_command_trains_evaluates_predicts_and_recovers(tiny_luke_dir, tmp_path):
    """The real console command, from the repository root: `.allennlp_plugins` loads the plugin."""
    data = FIXTURES / "data" / "sentiment.jsonl"
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(data)}
    config = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
    out = tmp_path / "run"
    trained = run_allennlp("train", config, "-s", str(out), env=env)
    assert "FutureWarning" not in trained.stderr  # allennlp's torch.cuda.amp.autocast (repair 11)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["training_loss"] < json.loads((out / "metrics_epoch_0.json").read_text())["training_loss"]
    assert metrics["training_accuracy"] >= 0.9  # 16 sentences, 10 epochs: the tiny model fits them

    evaluation = tmp_path / "eval.json"
    evaluated = run_allennlp(
        "evaluate", str(out / "model.tar.gz"), str(data), "--output-file", str(evaluation), env=env
    )
    assert 0.0 <= json.loads(evaluation.read_text())["accuracy"] <= 1.0
    assert f"Reading evaluation data from {data}\n" in evaluated.stderr  # not its stem, "sentiment" (repair 12)

    inputs, predictions = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inputs.write_text('{"sentence": "a wonderful film"}\n{"sentence": "a dull film"}\n')
    run_allennlp(
        "predict", str(out / "model.tar.gz"), str(inputs), "--output-file", str(predictions), "--silent", env=env
    )
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(rows) == 2 and all(r["label"] in ("pos", "neg") and len(r["probs"]) == 2 for r in rows)

    # --recover reads the training state back with torch.load's default weights_only=True.
    shutil.rmtree(out / "model.tar.gz", ignore_errors=True)
    result = run_allennlp("train", config, "-s", str(out), "--recover", env=env)
    assert "Recovering from prior training" in result.stderr
    states = list(out.glob("training_state_e*.th"))
    assert states and max(torch.load(path)["epochs_completed"] for path in states) == 10
