"""`make demo`'s runner (demo/ner_demo.py): commands in forked children, their output in numbered logs."""

import os
import sys

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "demo"))
import ner_demo  # noqa: E402


def test_forked_runs_in_a_child_with_its_output_in_the_log(tmp_path, capsys):
    log = tmp_path / "01-child.log"

    def child():
        print("from the child", os.getpid(), os.getcwd(), os.environ["DEMO_TEST"])

    ner_demo.forked(child, log, env={"DEMO_TEST": "seen"})
    words = log.read_text().split()
    assert words[:3] == ["from", "the", "child"] and int(words[3]) != os.getpid()
    assert words[4:] == [str(REPO_ROOT), "seen"]  # from the repository root, with the environment given
    assert "DEMO_TEST" not in os.environ and "done in" in capsys.readouterr().out


def test_a_failing_child_stops_the_demo_with_the_end_of_its_log(tmp_path):
    def child():
        print("the last words")
        raise ValueError("broken")

    with pytest.raises(SystemExit) as stopped:
        ner_demo.forked(child, tmp_path / "02-child.log")
    assert "exit status 1" in str(stopped.value) and "the last words" in str(stopped.value)
    assert "ValueError: broken" in str(stopped.value)  # the traceback, in the log


def test_latest_line_reads_allennlps_progress_bar(tmp_path):
    log = tmp_path / "03-train.log"
    log.write_text(
        "2026-11-25 12:40:25,994 - INFO - luke_allennlp.training.trainers.luke_gradient_descent - Epoch 3/7\n"
        "masked_lm_accuracy: 0.1, loss: 4.6530, batch_loss: 4.1 ||:  80%|########  | 16/20 [00:02<00:00]\r"
    )
    assert ner_demo.latest_line(log) == "epoch 4/8, batch 16/20, loss 4.6530"
