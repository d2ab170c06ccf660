"""
What the task models' tests share: allennlp's `ModelTestCase` set up on one of `configs/` with a tiny checkpoint and a
data fixture (`ConfigModelTestCase`), and a config trained for an epoch into an archive (`train_archive`).
"""

import copy
import json
import logging
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np
import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Instance
from allennlp.models import Model
from allennlp.nn.util import move_to_device

from luke_allennlp.modeling import static_shapes
from tests.conftest import SAME_BATCHES, set_config_env


class HostArraysModelTestCase(ModelTestCase):
    """allennlp's `ModelTestCase`, whose comparison of two batches also takes numpy arrays (metadata keeps its arrays
    as numpy, so that the trainer, which moves every tensor of a batch to the GPU, leaves them on the host)."""

    def assert_fields_equal(self, field1: Any, field2: Any, name: str, tolerance: float = 1e-6) -> None:
        if isinstance(field1, np.ndarray):
            np.testing.assert_allclose(field1, field2, rtol=tolerance, err_msg=name)
            return
        super().assert_fields_equal(field1, field2, name, tolerance)

    def readable_with_metadata_moved(self) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """The eval model's human-readable output of the whole dataset as one batch, and the same with the batch's
        metadata moved to the `meta` device first: the trainer moves every tensor of a batch to the GPU, metadata
        included, and on `meta` (a GPU's stand-in here) `.numpy()` or reading a tensor's value fails."""
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        expected = self.model.make_output_human_readable(self.model(**batch))
        batch["metadata"] = move_to_device(copy.deepcopy(batch["metadata"]), torch.device("meta"))
        return expected, self.model.make_output_human_readable(self.model(**batch))

    def compiled_model(self, monkeypatch: pytest.MonkeyPatch) -> Model:
        """The test's model built again from its config with the embedder's `compile: true`, holding the same
        weights; dynamo's `aot_eager` backend stands for inductor (it traces the same graphs, without code
        generation)."""
        compile_ = torch.compile
        monkeypatch.setattr(
            static_shapes.torch, "compile", lambda f, **_: compile_(f, dynamic=False, backend="aot_eager")
        )
        params = Params.from_file(str(self.param_file)).pop("model")
        params["embedder"]["compile"] = True
        compiled = Model.from_params(vocab=self.vocab, params=params)
        compiled.load_state_dict(self.model.state_dict())
        return compiled

    def assert_compiled_steps_are_eager_steps(
        self,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
        batches: List[List[Instance]],
        logits: str,
    ) -> List[str]:
        """The model with its embedder compiled (`compiled_model`), on each batch (both models in eval mode, so
        without dropout, with gradients): its loss, `logits` output and every parameter's gradient are the eager
        model's; dynamo compiled one graph per bucket (logged), with no graph break and no recompile. Returns the
        log lines of the graphs."""
        from torch._dynamo.utils import counters

        compiled = self.compiled_model(monkeypatch)
        torch._dynamo.reset()
        counters.clear()
        caplog.set_level(logging.INFO, logger="luke_allennlp.modeling.static_shapes")
        self.model.eval(), compiled.eval()
        for instances in batches:
            batch = Batch(instances)
            batch.index_instances(self.vocab)
            outputs = []
            for model in (self.model, compiled):
                model.zero_grad()
                output = model(**batch.as_tensor_dict())
                output["loss"].backward()
                outputs.append(output)
            expected, actual = outputs
            assert abs(expected["loss"].item() - actual["loss"].item()) < 1e-5
            torch.testing.assert_close(actual[logits], expected[logits], rtol=0, atol=1e-5)  # (-inf where padded)
            grads = dict(compiled.named_parameters())
            for name, param in self.model.named_parameters():
                if param.grad is not None:  # (to float rounding: a sum over every position, e.g. a CRF's, is large)
                    scale = max(1.0, param.grad.abs().max().item())
                    assert (grads[name].grad - param.grad).abs().max().item() < 1e-5 * scale, name
        graphs = [r.getMessage() for r in caplog.records if r.getMessage().startswith("torch.compile: graph ")]
        assert graphs and counters["stats"]["unique_graphs"] == len(graphs)  # (a recompile would add a graph)
        assert not counters["graph_break"]
        return graphs


class ConfigModelTestCase(HostArraysModelTestCase):
    """
    `ModelTestCase` on `CONFIG` (one of configs/), with the checkpoint of fixture `CHECKPOINT` as `MODEL_NAME` and the
    data of fixture `DATA` as training and validation data (a subclass that writes its data overrides `data`). The
    checkpoint's directory is `self.model_dir`.
    """

    CONFIG: Path
    CHECKPOINT = "tiny_luke_dir"
    DATA = ""

    def data(self, request: pytest.FixtureRequest, tmp_path: Path) -> Path:
        return request.getfixturevalue(self.DATA)

    @pytest.fixture(autouse=True)
    def _model(self, request, tmp_path, monkeypatch):
        data = self.data(request, tmp_path)
        self.model_dir = request.getfixturevalue(self.CHECKPOINT)
        set_config_env(monkeypatch, self.model_dir, data)
        self.set_up_model(self.CONFIG, data)

    def train_save_and_load(
        self, gradients_to_ignore: Iterable[str] = (), overrides: Optional[Dict[str, Any]] = None
    ) -> Tuple[Any, Any]:
        """allennlp's check (a training step gives every parameter but `gradients_to_ignore` a gradient; the saved and
        loaded model predict as the trained one) at learning rate 1e-3, both data loaders giving the same batches."""
        return self.ensure_model_can_train_save_and_load(
            self.param_file,
            gradients_to_ignore=set(gradients_to_ignore),
            overrides=json.dumps({"trainer.optimizer.lr": 1e-3, **(overrides or {}), **SAME_BATCHES}),
        )


def train_archive(
    config: Path, model_dir: Path, data: Path, directory: Path, overrides: Optional[Dict[str, Any]] = None
) -> Path:
    """`config` trained for one epoch from the checkpoint `model_dir` on `data` (training and validation) into
    `directory`: its `model.tar.gz`."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        set_config_env(monkeypatch, model_dir, data)
        overrides = json.dumps({"trainer.num_epochs": 1, **(overrides or {})})
        train_model_from_file(str(config), str(directory), overrides=overrides)
    return directory / "model.tar.gz"
