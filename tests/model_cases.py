"""
What the task models' tests share: allennlp's `ModelTestCase` set up on one of `configs/` with a tiny checkpoint and a
data fixture (`ConfigModelTestCase`), and a config trained for an epoch into an archive (`train_archive`).
"""

import copy
import json
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple

import numpy as np
import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.testing import ModelTestCase
from allennlp.nn.util import move_to_device

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
