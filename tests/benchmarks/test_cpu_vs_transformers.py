"""benchmarks/cpu_vs_transformers.py at tiny sizes: its encoder rows, the NER comparison's two sides computing the same
loss, and (slow) every section of `--quick`."""

import re
import sys

import pytest
import torch

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import cpu_vs_transformers  # noqa: E402

RATIO = re.compile(r"transformers / ours = ([\d.]+)|ours / transformers = ([\d.]+)")


def run(monkeypatch, capsys, tmp_path, *args):
    monkeypatch.setattr(sys, "argv", ["cpu_vs_transformers.py", "--quick", "--work-dir", str(tmp_path), *args])
    cpu_vs_transformers.main()
    return capsys.readouterr().out.split("every ratio:")[-1]


def test_the_encoder_rows_compare_equal_models(monkeypatch, capsys, tmp_path):
    out = run(monkeypatch, capsys, tmp_path, "--sections", "encoder")
    differences = [float(d) for d in re.findall(r"max \|ours - transformers\| of the outputs (\S+)", out)]
    assert len(differences) == 4 and max(differences) < 1e-5
    rows = [line for line in out.splitlines() if RATIO.search(line)]
    assert len(rows) == 8 and all(re.search(r"median \(min-max\) of 1 rounds", row) for row in rows)


def test_both_ner_sides_compute_the_same_loss_on_the_same_passes(tmp_path):
    """The span model and transformers' LukeForEntitySpanClassification given its weights and its passes."""
    args = cpu_vs_transformers.argparse.Namespace(quick=True, ner_sentences=24, ner_batches=1)
    checkpoint = tmp_path / "luke"
    from luke_allennlp.testing import write_tiny_checkpoint

    write_tiny_checkpoint(checkpoint, "luke", **cpu_vs_transformers.SIZES["tiny"], entity_emb_size=32)
    model, optimizer, (batch,) = cpu_vs_transformers.ner_model_and_batches(checkpoint, args)
    reference, reference_optimizer = cpu_vs_transformers.transformers_ner(model)
    passes = cpu_vs_transformers.transformers_passes(batch)
    model.eval(), reference.eval()
    with torch.no_grad():
        assert abs(float(model(**batch)["loss"]) - float(reference(**passes).loss)) < 1e-5
    model.train(), reference.train()
    for side, (m, o, inputs) in enumerate(((model, optimizer, batch), (reference, reference_optimizer, passes))):
        assert cpu_vs_transformers.ner_step(m, o, inputs, reference=side == 1) > 0


@pytest.mark.slow
def test_quick_prints_every_ratio(monkeypatch, capsys, tmp_path):
    out = run(monkeypatch, capsys, tmp_path)
    for what in ("encoder, NER pass", "NER training step", "NER step memory:", "predict 12", "start-up to the first"):
        assert any(what in line and RATIO.search(line) for line in out.splitlines()), what
