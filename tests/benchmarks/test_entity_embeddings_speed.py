"""benchmarks/entity_embeddings_speed.py, small: ours and transformers' entity embeddings agree, and it prints the
speed ratio."""

import re
import sys

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import entity_embeddings_speed  # noqa: E402


def test_prints_the_ratio_of_two_equal_embeddings(monkeypatch, capsys):
    argv = ["entity_embeddings_speed.py", "--rows", "2", "--entities", "8", "--hidden", "64", "--repeats", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    entity_embeddings_speed.main()
    out = capsys.readouterr().out
    outputs, gradients = re.search(r"outputs differ by at most (\S+), gradients by (\S+)", out).groups()
    assert float(outputs) < 1e-5 and float(gradients) < 1e-5
    assert re.search(r"ours / transformers speed: [\d.]+x", out)
