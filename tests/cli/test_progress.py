"""Progress bars as lines when standard error is not a terminal (`luke_allennlp.cli.progress`)."""

import io
import sys

import pytest
from allennlp.common.tqdm import Tqdm


def bar(steps: int) -> None:
    progress = Tqdm.tqdm(range(steps), total=steps)
    for step in progress:
        progress.set_description(f"loss: {step / 10:.4f}", refresh=False)


def test_in_a_file_a_line_per_step_with_no_interval(monkeypatch, capsys):
    monkeypatch.setenv("LUKE_PROGRESS_SECONDS", "0")
    bar(5)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert len(lines) == 6  # the bar at 0, then one line a step
    assert [line.split("|")[-1].split()[0] for line in lines] == ["0/5", "1/5", "2/5", "3/5", "4/5", "5/5"]
    assert lines[-1].startswith("loss: 0.4000") and "100%" in lines[-1]


def test_in_a_file_at_most_a_line_every_interval_and_the_last(monkeypatch, capsys):
    monkeypatch.setenv("LUKE_PROGRESS_SECONDS", "3600")
    bar(50)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "0/50" in lines[0] and "50/50" in lines[1]


def test_on_a_terminal_one_line_redrawn(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("LUKE_PROGRESS_SECONDS", "0")  # (ignored on a terminal)
    bar(5)
    text = terminal.getvalue()
    assert text.count("\r") >= 2 and text.count("\n") <= 1  # tqdm's redraws of one line


def test_a_bad_interval_is_named(monkeypatch):
    monkeypatch.setenv("LUKE_PROGRESS_SECONDS", "often")
    with pytest.raises(ValueError, match="LUKE_PROGRESS_SECONDS is 'often': give a number of seconds"):
        bar(1)
