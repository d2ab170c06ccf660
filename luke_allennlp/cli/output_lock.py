"""
One training run per serialization directory.

`allennlp train --recover -s DIR` while the original run was still training in DIR trained both to the end, their logs
interleaved and the config, metrics and archive whichever wrote last; `-f` deleted a directory another live run was
writing. Here `train_model` takes the lock of its serialization directory (`DIR/.lock`, an `OutputLock` of
`luke_allennlp.resources.output`) for the run's life, before `-f` removes anything; only the global primary takes it
(`node_rank` 0 under allennlp's launch, `RANK` 0 under torchrun), since the other nodes of a distributed run share the
directory.
"""

import contextlib
import os
import types
from typing import Any

from luke_allennlp.cli._patch import repaired, replace
from luke_allennlp.resources.output import OutputLock, is_global_primary, remove

SERIALIZATION_LOCK = ".lock"  # in the serialization directory


def repair_train_model(module: types.ModuleType) -> None:
    """`train_model` holds the lock of its serialization directory for the run's life (global primary only)."""
    train_model = module.train_model
    if repaired(train_model):
        return

    def locked_train_model(
        params: Any,
        serialization_dir: Any,
        recover: bool = False,
        force: bool = False,
        node_rank: int = 0,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        if not is_global_primary(node_rank):
            return train_model(params, serialization_dir, recover, force, node_rank, *args, **kwargs)
        directory = os.fspath(serialization_dir)
        created = not os.path.isdir(directory)
        os.makedirs(directory, exist_ok=True)
        lock = OutputLock(
            os.path.join(directory, SERIALIZATION_LOCK),
            directory,
            advice="one training run per serialization directory: wait for it to end (or stop it) "
            "before --recover or -f, or train into another directory",
        )
        lock.acquire()  # before -f removes anything
        try:
            return train_model(params, serialization_dir, recover, force, node_rank, *args, **kwargs)
        finally:
            lock.release()
            if created:
                with contextlib.suppress(OSError):
                    os.rmdir(directory)  # (only if the run stopped before writing anything)

    replace(module, "train_model", locked_train_model)


def repair_create_serialization_dir(module: types.ModuleType) -> None:
    """allennlp's `create_serialization_dir` takes a directory holding only the lock file for empty, and `-f` keeps
    the lock file (the directory's owner is the run that holds it)."""
    create_serialization_dir = module.create_serialization_dir
    if repaired(create_serialization_dir):
        return

    def patched(params: Any, serialization_dir: Any, recover: bool, force: bool) -> None:
        directory = os.fspath(serialization_dir)
        if not os.path.exists(os.path.join(directory, SERIALIZATION_LOCK)) or (recover and force):
            return create_serialization_dir(params, serialization_dir, recover, force)
        if force:
            for entry in os.listdir(directory):
                if entry != SERIALIZATION_LOCK:
                    remove(os.path.join(directory, entry))
        if os.listdir(directory) == [SERIALIZATION_LOCK]:
            if recover:
                from allennlp.common.checks import ConfigurationError

                raise ConfigurationError(
                    f"--recover specified but serialization_dir ({directory}) does not exist.  There is nothing to "
                    "recover from."
                )
            return None
        return create_serialization_dir(params, serialization_dir, recover, False)

    replace(module, "create_serialization_dir", patched)
