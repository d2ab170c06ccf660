"""The `wandb` callback in offline mode, its run file read back record by record."""

import json
import time
from pathlib import Path
from typing import Dict, Iterator, List

from tests.training.callbacks.two_layers import STEPS_PER_EPOCH, TwoLayers, build_trainer, expected_learning_rate


def records(path: Path) -> Iterator:
    """The protobuf records of a `.wandb` run file: its 7-byte header, then LevelDB's log format (blocks of 32 KiB,
    each record chunk: checksum, length, kind; kinds full 1, first 2, middle 3, last 4)."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    position, pieces = 7, b""
    while position + 7 <= len(data):
        left = 32768 - position % 32768
        if left < 7:  # a block's tail too short for a header is padding
            position += left
            continue
        length, kind = int.from_bytes(data[position + 4 : position + 6], "little"), data[position + 6]
        if kind == 0:
            break
        pieces += data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pieces)
            yield record
            pieces = b""


def history(run_file: Path, timeout: float = 60) -> List[Dict[str, float]]:
    """The run's history rows, once the file holds its exit record (wandb's service process writes the file and may
    still be writing when `wandb.finish` returns)."""
    deadline = time.monotonic() + timeout
    while not any(r.WhichOneof("record_type") == "exit" for r in records(run_file)) and time.monotonic() < deadline:
        time.sleep(0.2)
    rows = []
    for record in records(run_file):
        if record.WhichOneof("record_type") == "history":
            rows.append(
                {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
            )
    return rows


def test_offline_the_loss_and_each_groups_learning_rate_every_step(tmp_path, monkeypatch):
    for variable in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(variable, str(tmp_path / "home"))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    for setting in ("WANDB_X_DISABLE_STATS", "WANDB_X_DISABLE_META", "WANDB_X_DISABLE_MACHINE_INFO"):
        monkeypatch.setenv(setting, "true")  # (a second less to start the run)
    model = TwoLayers()
    build_trainer(
        tmp_path, model, callbacks=[{"type": "wandb", "project": "luke"}], metrics_every_num_batches=4
    ).train()

    (run_file,) = (tmp_path / "wandb").glob("offline-run-*/run-*.wandb")
    rows = history(run_file)
    steps = list(range(1, 2 * STEPS_PER_EPOCH + 1))
    assert [row["_step"] for row in rows] == steps  # one row a step
    assert all(abs(row["train/batch_loss"] - loss) < 1e-6 for row, loss in zip(rows, model.losses))
    for group in (0, 1):
        rates = [row[f"learning_rate/group_{group}"] for row in rows]
        assert all(abs(r - expected_learning_rate(group, s, len(steps))) < 1e-9 for r, s in zip(rates, steps))
    assert not any(key.startswith("learning_rate/") and "group" not in key for row in rows for key in row)
    assert [row["_step"] for row in rows if "validation/loss" in row] == [6, 12]
