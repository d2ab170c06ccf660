"""`allennlp seeds`: three seeds of the tiny classifier on the CPU, one killed mid-run and resumed; the summary against
an independent computation over the runs' metrics.json; `--summarize` over directories trained elsewhere."""

import json
import os
import subprocess

import numpy as np
import pytest
import torch

from luke_allennlp.experiments.runs import cpu_count
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT

PAPER = {"source": "a made-up paper", "metrics": {"best_validation_accuracy": 0.9, "test_accuracy": 0.95}}


def seeds_command(config, out, overrides, *extra, env):
    return subprocess.run(
        [
            str(ALLENNLP),
            "seeds",
            str(config),
            "-s",
            str(out),
            "--seeds",
            "3",
            "--jobs",
            "2",
            "-o",
            json.dumps(overrides),
        ]
        + ["--include-package", "tests.experiments.callbacks", *extra],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=600,
    )


@pytest.fixture(scope="module")
def seeds_run(tiny_luke_dir, tmp_path_factory):
    """The real command: seed-2 SIGKILLed at the end of its epoch 1 (after the checkpoint of epoch 0), the others
    finishing; then the same command again, which keeps seed-1 and seed-3 and resumes seed-2."""
    root = tmp_path_factory.mktemp("seeds")
    config = root / "classifier_with_paper.jsonnet"
    config.write_text(
        f"(import '{FIXTURES / 'configs' / 'luke_classifier.jsonnet'}') + {{ paper: {json.dumps(PAPER)} }}\n"
    )
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")}
    kill = {"type": "test_kill_once", "run": "seed-2", "epoch": 1, "marker": str(root / "killed")}
    # (the project's trainer: exact --recover)
    overrides = {"trainer.type": "luke_gradient_descent", "trainer.num_epochs": 3, "trainer.callbacks": [kill]}
    out = root / "seeds"
    first = seeds_command(config, out, overrides, env=env)
    kept = {name: (out / name / "metrics.json").stat().st_mtime_ns for name in ("seed-1", "seed-3")}
    interrupted = sorted(os.listdir(out / "seed-2"))
    first_summary = json.loads((out / "summary.json").read_text())
    second = seeds_command(config, out, overrides, env=env)
    return {
        "out": out,
        "config": config,
        "env": env,
        "overrides": overrides,
        "first": first,
        "second": second,
        "kept": kept,
        "interrupted": interrupted,
        "first_summary": first_summary,
    }


def test_a_killed_seed_is_reported_and_the_others_summarised(seeds_run):
    first = seeds_run["first"]
    assert first.returncode == 1, first.stderr[-3000:]
    assert first.stderr.splitlines()[-1].startswith("allennlp: error: 1 of 3 seeds failed: seed-2 (")
    assert first.stderr.splitlines()[-1].endswith(
        "Run the same command again to resume them (the finished seeds are kept)"
    )
    assert "seed-2: failed after" in first.stdout and "seed-1: finished" in first.stdout
    assert "training_state_e1_b0.th" in seeds_run["interrupted"] and "metrics.json" not in seeds_run["interrupted"]
    assert [run["name"] for run in seeds_run["first_summary"]["runs"]] == ["seed-1", "seed-3"]
    assert seeds_run["first_summary"]["metrics"]["best_validation_loss"]["n"] == 2


def test_the_same_command_keeps_finished_seeds_and_resumes_the_killed_one(seeds_run):
    second, out = seeds_run["second"], seeds_run["out"]
    assert second.returncode == 0, second.stderr[-3000:]
    assert "3 seeds of" in second.stdout and "2 finished (kept), 1 to resume" in second.stdout
    assert "seed-2: resuming" in second.stdout and "seed-1: starting" not in second.stdout
    for name, mtime in seeds_run["kept"].items():  # not trained again
        assert (out / name / "metrics.json").stat().st_mtime_ns == mtime
    commands = [line for line in (out / "logs" / "seed-2.log").read_text().splitlines() if line.startswith("$ ")]
    assert len(commands) == 2 and "--recover" not in commands[0] and "--recover" in commands[1]
    # Every seed of the config varied: allennlp's three, in each run's config.json.
    for seed in (1, 2, 3):
        config = json.loads((out / f"seed-{seed}" / "config.json").read_text())
        assert [config[key] for key in ("random_seed", "numpy_seed", "pytorch_seed")] == [seed] * 3
        assert config["paper"] == PAPER  # (kept in config.json; training ignored it)


def test_the_resumed_seed_ends_as_an_uninterrupted_run(seeds_run, tmp_path, monkeypatch):
    """seed-2, killed and resumed with `--recover`, has the final metrics of seed 2 trained in one go (with the
    threads its run had: the cores shared by --jobs 2)."""
    from allennlp.commands.train import train_model_from_file

    for name, value in seeds_run["env"].items():
        monkeypatch.setenv(name, value)
    overrides = {"trainer.type": "luke_gradient_descent", "trainer.num_epochs": 3}
    overrides.update({"random_seed": 2, "numpy_seed": 2, "pytorch_seed": 2})
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, cpu_count() // 2))
    try:
        train_model_from_file(str(seeds_run["config"]), str(tmp_path / "ref"), overrides=json.dumps(overrides))
    finally:
        torch.set_num_threads(threads)
    reference = json.loads((tmp_path / "ref" / "metrics.json").read_text())
    resumed = json.loads((seeds_run["out"] / "seed-2" / "metrics.json").read_text())
    for key in ("best_validation_loss", "validation_loss", "training_loss", "best_epoch", "epoch"):
        assert resumed[key] == reference[key], key
    assert resumed["epoch"] == 2


def test_the_summary_is_the_runs_mean_and_sample_sd(seeds_run):
    out = seeds_run["out"]
    summary = json.loads((out / "summary.json").read_text())
    runs = {f"seed-{s}": json.loads((out / f"seed-{s}" / "metrics.json").read_text()) for s in (1, 2, 3)}
    final = {k for m in runs.values() for k, v in m.items() if k.startswith(("best_validation_", "test_"))}
    assert set(summary["metrics"]) == final == {"best_validation_loss", "best_validation_accuracy"}
    for name, row in summary["metrics"].items():
        values = np.array([runs[run][name] for run in ("seed-1", "seed-2", "seed-3")])
        assert set(row) == {"mean", "sd", "min", "max", "n", "values", "runs", "paper"} - (
            set() if name in PAPER["metrics"] else {"paper"}
        )
        assert row["runs"] == ["seed-1", "seed-2", "seed-3"] and row["values"] == values.tolist() and row["n"] == 3
        assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
        assert row["sd"] == pytest.approx(values.std(ddof=1), rel=1e-12, abs=1e-15)
        assert (row["min"], row["max"]) == (values.min(), values.max())
    assert len(set(summary["metrics"]["best_validation_loss"]["values"])) == 3  # the seeds did differ
    assert summary["metrics"]["best_validation_accuracy"]["paper"] == 0.9
    assert [(r["name"], r["dir"], r["seed"]) for r in summary["runs"]] == [
        (f"seed-{s}", f"seed-{s}", s) for s in (1, 2, 3)
    ]
    assert summary["paper"] == PAPER
    markdown = (out / "summary.md").read_text()
    assert "| best_validation_accuracy |" in markdown and "| 0.9000 |" in markdown
    assert "Not measured by these runs: `test_accuracy` 0.9500" in markdown


def test_summarize_reads_runs_trained_elsewhere(seeds_run, tmp_path, monkeypatch, capsys):
    """`--summarize` over run directories, written where -s says: the same figures, the runs by their paths."""
    import sys

    from allennlp.commands import main

    out = seeds_run["out"]
    argv = ["allennlp", "seeds", "--summarize", str(out / "seed-1"), str(out / "seed-3"), "-s", str(tmp_path / "s")]
    monkeypatch.setattr(sys, "argv", argv)
    main(prog="allennlp")
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert [run["dir"] for run in summary["runs"]] == [str(out / "seed-1"), str(out / "seed-3")]
    loss = [json.loads((out / s / "metrics.json").read_text())["best_validation_loss"] for s in ("seed-1", "seed-3")]
    assert summary["metrics"]["best_validation_loss"]["values"] == loss
    assert summary["paper"] == PAPER  # (from the runs' config.json)
    assert "| best_validation_loss |" in capsys.readouterr().out

    argv[3:5] = [str(out / "seed-1"), str(tmp_path)]  # a directory that holds no finished run: one line
    with pytest.raises(SystemExit):
        main(prog="allennlp")
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: {tmp_path}: no metrics.json: not a finished training run (allennlp train writes it last)"
    )
