"""A reader's shards as allennlp hands them out: distributed ranks times data-loader workers, faked in one process."""

from typing import Callable, List

import pytest
from allennlp.data import DatasetReader, Instance
from allennlp.data.dataset_readers import dataset_reader as dataset_reader_module
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo


def read_in_shards(
    monkeypatch: pytest.MonkeyPatch,
    make_reader: Callable[[], DatasetReader],
    path: str,
    ranks: int = 2,
    workers: int = 2,
) -> List[List[Instance]]:
    """What each of `ranks` distributed processes x `workers` data-loader workers reads of `path` (rank by rank), each
    with a fresh reader from `make_reader`."""
    monkeypatch.setattr(dataset_reader_module.util, "is_distributed", lambda: True)
    monkeypatch.setattr(dataset_reader_module.dist, "get_world_size", lambda: ranks)
    shards = []
    for rank in range(ranks):
        monkeypatch.setattr(dataset_reader_module.dist, "get_rank", lambda rank=rank: rank)
        for worker in range(workers):
            reader = make_reader()
            reader._set_worker_info(WorkerInfo(workers, worker))
            shards.append(list(reader.read(path)))
    return shards
