"""luke_allennlp/experiments/summary.py: the spread of runs' final metrics, the paper's figures beside them."""

import json

import pytest

from luke_allennlp.experiments.summary import (
    Run,
    SummaryError,
    markdown,
    paper_figures,
    read_run,
    summarize,
    write_summary,
)

PAPER = {"source": "Table 3", "metrics": {"test_f1": 0.943, "best_validation_f1": 0.95}}


def write_run(directory, metrics, paper=None):
    directory.mkdir(parents=True)
    (directory / "metrics.json").write_text(json.dumps(metrics))
    (directory / "config.json").write_text(json.dumps({"trainer": {}, **({"paper": paper} if paper else {})}))
    return directory


def test_the_summary_holds_each_final_metric_with_known_figures(tmp_path):
    runs = [
        read_run(write_run(tmp_path / f"seed-{s}", {**m, "training_loss": 1.0, "epoch": 3}, PAPER), seed=s)
        for s, m in [
            (1, {"best_validation_f1": 0.5, "test_f1": 0.4, "best_epoch": 2, "best_validation_tag": "x"}),
            (2, {"best_validation_f1": 0.7, "test_f1": 0.6, "best_epoch": 1}),
            (3, {"best_validation_f1": 0.9, "best_epoch": 0}),  # (no test set evaluated)
        ]
    ]
    summary = summarize(runs, base=str(tmp_path))
    assert set(summary["metrics"]) == {"best_validation_f1", "test_f1"}  # numbers only; no training_*, best_epoch
    f1 = summary["metrics"]["best_validation_f1"]
    assert (f1["mean"], f1["sd"], f1["min"], f1["max"], f1["n"]) == (
        pytest.approx(0.7),
        pytest.approx(0.2),
        0.5,
        0.9,
        3,
    )
    assert f1["values"] == [0.5, 0.7, 0.9] and f1["runs"] == ["seed-1", "seed-2", "seed-3"] and f1["paper"] == 0.95
    test = summary["metrics"]["test_f1"]
    assert (test["n"], test["runs"], test["mean"], test["paper"]) == (
        2,
        ["seed-1", "seed-2"],
        pytest.approx(0.5),
        0.943,
    )
    assert test["sd"] == pytest.approx(0.1414213562373095)
    assert summary["runs"] == [{"name": f"seed-{s}", "dir": f"seed-{s}", "seed": s} for s in (1, 2, 3)]
    assert summary["paper"] == PAPER

    write_summary(str(tmp_path), summary, title="Three seeds")
    assert json.loads((tmp_path / "summary.json").read_text()) == summary
    text = (tmp_path / "summary.md").read_text()
    assert text.startswith("# Three seeds\n")
    assert "| best_validation_f1 | 0.7000 ± 0.2000 | 0.5000 | 0.9000 | 3 | 0.9500 | 0.5000 | 0.7000 | 0.9000 |" in text
    assert "| test_f1 | 0.5000 ± 0.1414 | 0.4000 | 0.6000 | 2 | 0.9430 | 0.4000 | 0.6000 | – |" in text
    assert "Paper: Table 3." in text


def test_one_run_has_no_sd_and_runs_outside_the_summary_are_absolute(tmp_path):
    run = Run(str(tmp_path / "elsewhere"), "elsewhere", {"best_validation_accuracy": 0.8})
    summary = summarize([run], base=str(tmp_path / "summary"))
    assert summary["metrics"]["best_validation_accuracy"]["sd"] is None
    assert summary["runs"] == [{"name": "elsewhere", "dir": str(tmp_path / "elsewhere")}]
    assert "| best_validation_accuracy | 0.8000 | 0.8000 | 0.8000 | 1 | – | 0.8000 |" in markdown(summary)


def test_runs_whose_configs_disagree_on_the_paper_show_none():
    runs = [Run("a", "a", {"test_f1": 0.9}, paper=PAPER), Run("b", "b", {"test_f1": 0.8}, paper=None)]
    summary = summarize(runs)
    assert "paper" not in summary and "paper" not in summary["metrics"]["test_f1"]


def test_a_figure_these_runs_did_not_measure_is_named():
    summary = summarize([Run("a", "a", {"best_validation_f1": 0.9}, paper=PAPER)])
    assert "Not measured by these runs: `test_f1` 0.9430 (a `test_*` figure needs `test_data_path`" in markdown(summary)


@pytest.mark.parametrize(
    "paper, message",
    [
        ({"metrics": {}}, "paper must be an object with a non-empty 'metrics' object (NAME: figure)"),
        ({"metrics": {"test_f1": "94.3"}}, 'paper.metrics.test_f1: expected a number, not "94.3"'),
        (
            {"metrics": {"f1": 0.9}},
            "paper.metrics.f1: name a final metric of metrics.json (best_validation_* or test_*)",
        ),
        ({"metrics": {"test_f1": 0.9}, "table": 3}, "paper.table: not a key of paper (its keys: source, metrics)"),
    ],
)
def test_a_malformed_paper_key_is_one_line_naming_it(paper, message):
    with pytest.raises(SummaryError) as error:
        paper_figures({"paper": paper}, "config.json")
    assert str(error.value) == f"config.json: {message}"
    assert paper_figures({}, "config.json") is None


def test_an_unfinished_run_is_refused(tmp_path):
    with pytest.raises(SummaryError, match="no metrics.json: not a finished training run"):
        read_run(str(tmp_path))
    with pytest.raises(SummaryError, match="no runs to summarise"):
        summarize([])
