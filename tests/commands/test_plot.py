"""`allennlp plot`: runs and a seeds summary into a PNG and an HTML page whose data a reader gets back."""

import json
import re
import sys
from pathlib import Path

import pytest
from allennlp.commands import main
from tensorboardX import SummaryWriter

from luke_allennlp.commands.plot import read
from luke_allennlp.experiments.summary import read_run as summary_run
from luke_allennlp.experiments.summary import summarize


def run_command(*args, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["allennlp", *args])
    main(prog="allennlp")


def write_run(directory: Path, losses, validation_f1, tensorboard: bool = True) -> None:
    """A run as `allennlp train` leaves it: metrics_epoch_N.json, and the `tensorboard` callback's event files."""
    directory.mkdir(parents=True)
    for epoch, f1 in enumerate(validation_f1):
        metrics = {"epoch": epoch, "training_loss": 1.0 / (epoch + 1), "validation_loss": 2.0 / (epoch + 1)}
        metrics.update({"validation_f1": f1, "training_worker_0_memory_MB": 100.0, "training_duration": "0:00:01"})
        (directory / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics))
    if tensorboard:
        writer = SummaryWriter(str(directory / "log" / "train"))
        for step, loss in enumerate(losses, start=1):
            writer.add_scalar("train/batch_loss", loss, step)
            writer.add_scalar("learning_rate/group_0", 0.1 * step, step)
            writer.add_scalar("learning_rate/group_1", 0.2 * step, step)
        writer.close()


def page_data(html: str):
    (payload,) = re.findall(r'<script type="application/json" id="plot-data">(.*?)</script>', html, re.S)
    return json.loads(payload)


def test_runs_and_a_seeds_summary_into_png_and_html(tmp_path, monkeypatch, capsys):
    write_run(tmp_path / "seeds" / "seed_1", [0.9, 0.5, 0.25], [0.5, 0.75])
    write_run(tmp_path / "seeds" / "seed_2", [0.8, 0.4, 0.2], [0.25, 0.5])
    write_run(tmp_path / "no-tensorboard", [], [0.1, 0.2, 0.3], tensorboard=False)
    # The summary as `allennlp seeds` writes it: runs as {"name", "dir", "seed"}, dirs relative to the summary's
    # directory where inside it, else absolute (here seed_2's: a run trained elsewhere).
    runs = []
    for seed, f1 in ((1, 0.75), (2, 0.5)):
        (tmp_path / "seeds" / f"seed_{seed}" / "metrics.json").write_text(json.dumps({"best_validation_f1": f1}))
        runs.append(summary_run(str(tmp_path / "seeds" / f"seed_{seed}"), seed=seed))
    summary = summarize(runs, base=str(tmp_path / "seeds" / "seed_1" / ".."))
    summary["runs"][1]["dir"] = str(tmp_path / "seeds" / "seed_2")
    assert summary["runs"][0]["dir"] == "seed_1"
    (tmp_path / "seeds" / "summary.json").write_text(json.dumps(summary))
    png, page = tmp_path / "out" / "runs.png", tmp_path / "out" / "runs.html"
    given = [str(tmp_path / "seeds"), str(tmp_path / "no-tensorboard"), str(tmp_path / "seeds" / "seed_1")]
    run_command("plot", *given, "--out", str(png), "--out", str(page), monkeypatch=monkeypatch)

    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    html = page.read_text()
    assert html.count('src="data:image/png;base64,') == 1 and "<td>best_validation_f1</td><td>0.625</td>" in html
    data = page_data(html)
    runs = {run["name"]: run for run in data["runs"]}
    assert sorted(runs) == ["no-tensorboard", "seed_1", "seed_2"]  # seed_1, given twice, drawn once
    assert runs["seed_2"]["steps"]["train/batch_loss"] == [
        [1, pytest.approx(0.8)],
        [2, pytest.approx(0.4)],
        [3, pytest.approx(0.2)],
    ]
    assert sorted(runs["seed_1"]["steps"]) == ["learning_rate/group_0", "learning_rate/group_1", "train/batch_loss"]
    assert runs["no-tensorboard"]["steps"] == {}  # per epoch only
    assert runs["no-tensorboard"]["epochs"]["validation_f1"] == [[0, 0.1], [1, 0.2], [2, 0.3]]
    assert "training_duration" not in runs["seed_1"]["epochs"]  # (not a number)
    (drawn_summary,) = data["summaries"]
    assert drawn_summary["metrics"]["best_validation_f1"]["values"] == [0.75, 0.5]
    assert drawn_summary["metrics"]["best_validation_f1"]["sd"] == pytest.approx(0.1767767)
    assert "wrote" in capsys.readouterr().out


def test_what_is_not_a_run_is_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        ValueError, match=r"empty: neither a training run \(metrics_epoch_\*.json, log/train\) nor a seeds"
    ):
        read([str(tmp_path / "empty")])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "summary.json").write_text('{"metrics": {"f1": {"mean": 1}}}')
    with pytest.raises(ValueError, match='summary.json: metric f1 needs "mean", "sd" and "values"'):
        read([str(tmp_path / "bad")])
