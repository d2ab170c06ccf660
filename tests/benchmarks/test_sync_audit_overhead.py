"""benchmarks/sync_audit_overhead.py, small: it runs, the audited step counts no sync, and it prints its figures."""

import sys

import torch

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import sync_audit_overhead  # noqa: E402


def test_prints_the_audits_cost_a_step(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["sync_audit_overhead.py", "--layers", "2", "--repeats", "1"])
    threads = torch.get_num_threads()
    try:
        sync_audit_overhead.main()
    finally:
        torch.set_num_threads(threads)  # (the benchmark runs on one)
    out = capsys.readouterr().out
    assert "2 layers, hidden 64" in out and "aten operations a step: " in out
    assert "audit adds " in out and " us an operation" in out
