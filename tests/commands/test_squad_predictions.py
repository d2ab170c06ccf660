import json
import os
import subprocess
import sys

import pytest
from allennlp.commands import main
from allennlp.commands.train import train_model_from_file

from luke_allennlp.commands.squad_predictions import read_predictions
from luke_allennlp.training.metrics.squad_em_and_f1 import exact_match_score, f1_score, max_over_golds
from tests.conftest import ALLENNLP, REPO_ROOT, set_config_env


def run_allennlp(*args):
    result = subprocess.run(
        [str(ALLENNLP), *args], capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ), timeout=600
    )
    assert result.returncode == 0, f"allennlp {args[0]} failed:\n{result.stderr[-4000:]}"
    return result


def run_command(*args, monkeypatch):
    """The `allennlp` command line in this process (a subprocess spends most of its time importing)."""
    monkeypatch.setattr(sys, "argv", ["allennlp", *args])
    main(prog="allennlp")


def test_evaluate_then_official_predictions(tiny_luke_dir, squad_slice, tmp_path, monkeypatch, capsys):
    set_config_env(monkeypatch, tiny_luke_dir, squad_slice)
    overrides = {
        "trainer.num_epochs": 1,
        "data_loader.batch_sampler.batch_size": 16,
        "dataset_reader.max_seq_length": 96,
    }
    config = REPO_ROOT / "configs" / "reading_comprehension" / "squad_without_entities.jsonnet"
    train_model_from_file(str(config), str(tmp_path / "run"), overrides=json.dumps(overrides))

    lines, metrics = tmp_path / "predictions.jsonl", tmp_path / "metrics.json"
    run_allennlp(
        "evaluate",
        str(tmp_path / "run" / "model.tar.gz"),
        str(squad_slice),
        "--output-file",
        str(metrics),
        "--predictions-output-file",
        str(lines),
    )
    rows = [json.loads(line) for line in lines.read_text().splitlines()]
    squad = json.loads(squad_slice.read_text())
    questions = {
        qa["id"]: (p["context"], [a["text"] for a in qa["answers"]])
        for p in squad["data"][0]["paragraphs"]
        for qa in p["qas"]
    }
    assert sorted(r["id"] for r in rows) == sorted(questions)  # one line per question, whatever the batching
    for row in rows:
        context, golds = questions[row["id"]]
        assert set(row) == {"id", "answer", "start", "end", "score", "gold_answers", "em", "f1"}
        assert row["answer"] == context[row["start"] : row["end"]] and row["gold_answers"] == golds
        assert row["f1"] == pytest.approx(max_over_golds(f1_score, row["answer"], golds))

    official = tmp_path / "official.json"
    run_command("squad-predictions", str(lines), str(official), "--dataset", str(squad_slice), monkeypatch=monkeypatch)
    predictions = json.loads(official.read_text())
    assert predictions == {row["id"]: row["answer"] for row in rows}
    scores = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    evaluated = json.loads(metrics.read_text())
    assert scores["questions"] == 55 and scores["unanswered"] == 0
    assert scores["exact_match"] == pytest.approx(100 * evaluated["em"]) and scores["f1"] == pytest.approx(
        100 * evaluated["f1"]
    )
    em = sum(max_over_golds(exact_match_score, predictions[q], golds) for q, (_, golds) in questions.items())
    assert scores["exact_match"] == pytest.approx(100 * em / 55)


def test_bad_prediction_lines_name_file_and_line(tmp_path, monkeypatch):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "answer": "x"}\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"p\.jsonl:2: expected a JSON object with \"id\" and \"answer\""):
        read_predictions(str(path))
    path.write_text('{"id": "a", "answer": "x"}\n\n{"id": "a", "answer": "y"}\n')
    with pytest.raises(ValueError, match=r"p\.jsonl:3: question a is predicted twice"):
        read_predictions(str(path))
    with pytest.raises(SystemExit, match=r"allennlp squad-predictions: error: .*predicted twice"):
        run_command("squad-predictions", str(path), str(tmp_path / "o.json"), monkeypatch=monkeypatch)
