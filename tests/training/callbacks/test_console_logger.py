"""The trainer's console: the epoch's metric table, no raw tensors unless asked for."""

import logging

from tests.training.callbacks.two_layers import TwoLayers, build_trainer


def test_no_batch_inputs_by_default_and_allennlps_dump_when_asked(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="allennlp.training.callbacks.console_logger"):
        build_trainer(tmp_path / "quiet", TwoLayers(), epochs=1).train()
    quiet = caplog.text
    assert "Training |  Validation" in quiet  # the epoch's table stays
    assert "Batch inputs" not in quiet and "Shape:" not in quiet

    caplog.clear()
    asked = [{"type": "console_logger", "should_log_inputs": True}]
    with caplog.at_level(logging.INFO, logger="allennlp.training.callbacks.console_logger"):
        build_trainer(tmp_path / "asked", TwoLayers(), epochs=1, callbacks=asked).train()
    assert caplog.text.count("Batch inputs") == 2  # the first training batch and the first validation batch
    assert "batch_input/x (Shape: 1 x 2)" in caplog.text
    assert caplog.text.count("Training |  Validation") == 1  # allennlp's console logger once, not twice
