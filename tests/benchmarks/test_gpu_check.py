"""benchmarks/gpu_check.py on the CPU (`--quick`): its report's schema, the config rows, and the trainer loop's host
syncs and pass-start stall for pretraining and NER. (Every config's own CPU run is tests/configs/; on this 2-core
machine the check takes one config here, and its throughput rows eager only.)"""

import json
import os
import sys
from types import SimpleNamespace

import pytest
import torch

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import gpu_check  # noqa: E402

CONFIG = "configs/ner/conll2003.jsonnet"


def test_quick_cpu_check(tmp_path):
    environment = dict(os.environ)
    try:
        returned = gpu_check.main(
            [
                "--device",
                "cpu",
                "--quick",
                "--out",
                str(tmp_path / "out"),
                "--configs",
                CONFIG,
                "--skip",
                "variants",
                "compiled",
                "--work-dir",
                str(tmp_path / "work"),
            ]
        )
    finally:
        os.environ.clear()
        os.environ.update(environment)
    report = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    assert report == json.loads(json.dumps(returned))  # the file holds the whole report
    assert report["configs"][CONFIG]["status"] == "ok" and report["configs"][CONFIG]["steps"] == 2
    assert report["settings"]["device"] == "cpu" and report["settings"]["quick"] is True
    markdown = (tmp_path / "out" / "gpu_check.md").read_text()
    assert f"| {CONFIG} | ok |" in markdown
    audited = report["settings"]["host_sync_audit"]
    for task in ("pretraining", "ner"):
        row = report["throughput"][task]
        assert row["status"] == "ok", row["status"]
        assert row["mfu"] is None and row["loop_over_bare"] > 0  # (no figure asserted: a CPU under load)
        assert (tmp_path / "out" / row["trace"]).stat().st_size > 0
        profile = row["profile"]  # (the CPU's operators: the largest is a matmul or its backward)
        assert 0 < profile["busy_ms_per_step"] and len(profile["top"]) == 12
        assert profile["top"][0]["ms_per_step"] >= profile["top"][-1]["ms_per_step"] > 0
        assert f"| {task} | {profile['wall_ms_per_step']} | {profile['busy_ms_per_step']} |" in markdown
        if audited:  # luke_allennlp.training.trainers.sync_audit and the trainer's audit_host_syncs
            assert row["host_syncs_per_step"] == 0
            assert row["pass_start_stall_steps"] <= 1
        else:
            assert row["host_syncs_per_step"] is None and row["pass_start_stall_steps"] is None
    assert report["throughput"]["ner"]["bare_over_transformers"] > 0
    memory = report["throughput"]["pretraining"]["memory_by_micro_batch"]  # (peak memory: CUDA only)
    assert list(memory["tokens_per_second"]) == ["4", "8", "16"] and memory["peak_gb"] == {}


def test_a_failing_or_slow_row_is_its_one_line_status(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "MIN_ROW_S", 0.5)
    report = gpu_check.Report(tmp_path, {})
    rows = report.data["configs"]

    def fails(row):
        row["figure"] = 1.0  # (what it measured before it failed stays)
        raise ValueError("bad\nthing")

    def sleeps(row):
        import time

        time.sleep(0.3)

    gpu_check.run_row(rows, "a", 30, gpu_check.torch.device("cpu"), fails, report)
    gpu_check.run_row(rows, "b", 3, gpu_check.torch.device("cpu"), sleeps, report)  # within its limit: runs
    gpu_check.run_row(rows, "c", 0.4, gpu_check.torch.device("cpu"), sleeps, report)  # under MIN_ROW_S: skipped
    saved = json.loads((tmp_path / "gpu_check.json").read_text())["configs"]
    assert saved["a"]["status"] == "ValueError: bad thing" and saved["a"]["figure"] == 1.0
    assert "Traceback" in (tmp_path / saved["a"]["log"]).read_text()
    assert saved["b"]["status"] == "ok" and saved["c"]["status"] == "skipped: the budget ran out"


def test_a_row_over_its_limit_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "MIN_ROW_S", 0.5)
    report = gpu_check.Report(tmp_path, {})

    def spins(row):
        while True:
            pass

    row = gpu_check.run_row(report.data["throughput"], "x", 1.2, gpu_check.torch.device("cpu"), spins, report)
    assert row["status"] == "RowTimeout: over its limit of 1 s" and row["seconds"] < 4


def test_trainer_figures():
    """Host syncs: the most in an audited step without a report, the run's first apart; CUDA's count of the same
    steps and the events of the worst one; the pass-start stall: the longest wait for a pass's first batch after the
    first pass, in median steps of the last (timed) epoch."""
    trainer = SimpleNamespace(
        host_sync_counts=[(1, False, 3), (2, True, 2), (3, False, 0), (4, False, 1), (5, True, 2), (6, False, 0)],
        cuda_sync_counts=[(1, False, 9), (2, True, 2), (3, False, 4), (4, False, 1), (5, True, 2), (6, False, 0)],
        host_sync_events=[(1, ["item at a.py:1"]), (3, ["nonzero at b.py:2"]), (4, ["item at c.py:3"])],
        step_times=[0.5, 0.1, 0.1, 0.2, 0.1, 0.1],
        pass_start_waits=[2.0, 0.05, 0.15],
    )
    figures = gpu_check.trainer_figures(trainer, steps=3)
    assert figures["host_syncs_per_step"] == 1 and figures["host_syncs_first_step"] == 3
    assert figures["host_syncs_reported_step"] == 2 and figures["audited_steps"] == 6
    assert figures["cuda_syncs_per_step"] == 4 and figures["sync_events"] == ["nonzero at b.py:2"]
    assert figures["pass_start_stall_steps"] == 1.5 and figures["first_pass_start_wait_s"] == 2.0
    assert gpu_check.trainer_figures(SimpleNamespace(), steps=3) == {
        "host_syncs_per_step": None,
        "pass_start_stall_steps": None,
    }


def test_a_row_in_progress_is_written(tmp_path):
    report = gpu_check.Report(tmp_path, {})
    report.data["throughput"]["ner"] = {"size": "tiny", "loop_tokens_per_second": 10.0}
    report.write()
    assert "| ner | running | tiny |" in (tmp_path / "gpu_check.md").read_text()


def test_compile_events_say_what_torch_compile_did(tmp_path):
    """A compiled row's `compile_events`: dynamo's graphs and graph breaks, and the static-shape buckets' log lines (a
    bucket compiled again is a warning)."""
    from luke_allennlp.modeling.inputs import LukeInputs
    from luke_allennlp.modeling.static_shapes import StaticShapes

    def broken(x):
        x = x + 1
        torch._dynamo.graph_break()
        return x * 2

    torch._dynamo.reset()
    with gpu_check.compile_events() as events:
        compiled = torch.compile(broken, backend="aot_eager")
        compiled(torch.ones(3)), compiled(torch.ones(3))  # two graphs (the break), compiled once
        shapes = StaticShapes(lambda inputs: inputs.input_ids * 2, "a doubling", 8, 4, 0, backend="aot_eager")
        shapes(LukeInputs(torch.ones(2, 5)), (), (), training=False)
        shapes(LukeInputs(torch.ones(3, 7)), (), (), training=False)  # the same bucket: no new graph
        shapes(LukeInputs(torch.ones(2, 5, dtype=torch.float64)), (), (), training=False)  # the same bucket, again
    assert events["graph_breaks"] == 1 and events["cudagraph_skips"] == 0
    assert events["unique_graphs"] == 4  # the break's two, the bucket's, and its recompilation
    assert events["graphs"] == ["torch.compile: graph 1 of a doubling, for 8 words, no entities"]
    assert len(events["warnings"]) == 1 and "a doubling was compiled again for 8 words" in events["warnings"][0]
    report = gpu_check.Report(tmp_path, {})
    report.data["throughput"]["ner_compiled"] = {"compile_events": events}
    assert "| ner_compiled | 4 | 1 | 0 | 1 | 1 |" in report.markdown()


def test_profile_summary_on_cuda_counts_the_kernels_against_the_wall_time():
    """On CUDA a step's busy time is its kernels' (the operators that launch them are not counted again)."""
    from torch.autograd import DeviceType

    def event(key, device_type, count, cpu_us, device_us):
        return SimpleNamespace(
            key=key, device_type=device_type, count=count, self_cpu_time_total=cpu_us, self_device_time_total=device_us
        )

    averages = [
        event("aten::mm", DeviceType.CPU, 8, 400.0, 3000.0),  # (its kernels' time again, as the launching operator)
        event("sm90_xmma_gemm_bf16", DeviceType.CUDA, 8, 0.0, 3000.0),
        event("vectorized_elementwise_kernel", DeviceType.CUDA, 40, 0.0, 1000.0),
    ]
    summary = gpu_check.profile_summary(averages, torch.device("cuda"), steps=2, wall=0.005)
    assert summary["wall_ms_per_step"] == 2.5 and summary["busy_ms_per_step"] == 2.0  # 4 ms of kernels in 2 steps
    assert [(op["name"], op["calls_per_step"], op["share"]) for op in summary["top"]] == [
        ("sm90_xmma_gemm_bf16", 4.0, 0.75),
        ("vectorized_elementwise_kernel", 20.0, 0.25),
    ]


def test_a_compiled_row_records_its_compile_events_even_when_it_fails():
    def fails(row):
        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        raise ValueError("bad")

    row = {}
    torch._dynamo.reset()
    with pytest.raises(ValueError, match="bad"):
        gpu_check.recording_compile_events(fails)(row)
    assert row["compile_events"]["unique_graphs"] == 1 and row["compile_events"]["graph_breaks"] == 0
