"""
One training run per serialization directory; one writer per output of `predict` and `evaluate`.

`allennlp train --recover -s DIR` while the original run was still training in DIR trained both to the end, their logs
interleaved and the config, metrics and archive whichever wrote last; `-f` deleted a directory another live run was
writing. Here `train_model` takes the lock of its serialization directory (`DIR/.lock`, an `OutputLock` of
`luke_allennlp.resources.output`) for the run's life, before `-f` removes anything; only the global primary takes it
(`node_rank` 0 under allennlp's launch, `RANK` 0 under torchrun), since the other nodes of a distributed run share the
directory. The run refuses a directory inside which another process writes (an `evaluate` whose `--output-file` is
there: `-f` deleted its predictions, and its metrics ended beside the new archive), and removes the temporaries that a
killed run left there (`.model.tar.gz.tmp-PID`), saying so.

`allennlp predict` and `allennlp evaluate` hold the lock of each output file (`OUT.lock` beside it) while they run: two
`predict` into one `--output-file` interleaved their lines into broken JSON. Their outputs are checked before any work:
a directory, or a place that cannot be written (`evaluate` found out after the whole evaluation, and lost the metrics),
is refused in one line; so is an output inside a directory that a live training owns.
"""

import contextlib
import errno
import json
import os
import types
from typing import Any, Callable, List, Tuple

from luke_allennlp.resources.output import (
    DIRECTORY_LOCK,
    OutputInUseError,
    OutputLock,
    held_locks_under,
    is_global_primary,
    lock_output,
    remove,
    remove_stale_temporaries,
)
from luke_allennlp_compat.patch import repaired, replace

SERIALIZATION_LOCK = DIRECTORY_LOCK  # in the serialization directory


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
            writers = held_locks_under(directory)
            if writers:
                path, holder = writers[0]
                raise OutputInUseError(
                    f"{directory} is being written by another process ({holder}, writing "
                    f"{path[: -len('.lock')]}): one writer per directory: wait for it to end, or train into another "
                    "directory"
                )
            remove_stale_temporaries(directory, lock.previous_holder)
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


def _evaluation_inputs(input_file: str) -> List[Any]:
    """allennlp's reading of `evaluate`'s input argument: a list of JSON values, or comma-separated paths."""
    try:
        return json.loads(f"[{input_file}]")
    except ValueError:
        return input_file.split(",")


def evaluate_outputs(args: Any) -> List[Tuple[str, str]]:
    """The files `allennlp evaluate` writes, each with its option: `--output-file`, `--predictions-output-file`,
    comma-separated, or named after the inputs with `--auto-names`."""
    inputs = [p for p in _evaluation_inputs(args.input_file) if isinstance(p, str)]
    auto = getattr(args, "auto_names", "NONE")
    outputs = []
    for option, given, names, suffix in (
        ("--output-file", args.output_file, ("METRICS", "ALL"), ".outputs"),
        ("--predictions-output-file", args.predictions_output_file, ("PREDS", "ALL"), ".preds"),
    ):
        if given is None:
            continue
        if auto in names:
            paths = [
                os.path.join(os.path.dirname(p), os.path.splitext(os.path.basename(p))[0] + suffix) for p in inputs
            ]
        else:
            paths = [p for p in given.split(",") if p]
        outputs += [(option, path) for path in paths]
    return outputs


def check_output_file(option: str, path: str) -> bool:
    """Refuses (`CommandLineError`), before any work, an output file that is a directory or cannot be written; creates
    its folder. Returns whether it is a file to lock (not standard output, a device or a pipe)."""
    from luke_allennlp.cli.overwrite_guard import CommandLineError

    if path in ("-", "") or (os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)):
        return False
    if os.path.isdir(path):
        raise CommandLineError(
            f"{option} {path} is a directory: name a file (e.g. {os.path.join(path, 'metrics.json')})"
        )
    parent = os.path.dirname(os.path.abspath(path))
    existing = parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise CommandLineError(f"{option} {path} cannot be written: {existing} is a file, not a folder")
    try:
        os.makedirs(parent, exist_ok=True)
        if os.path.exists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))  # (opened to write nothing: its content kept)
        elif not os.access(parent, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), parent)
    except OSError as error:
        raise CommandLineError(f"{option} {path} cannot be written: {_reason(error)}") from None
    return True


def _reason(error: OSError) -> str:
    where = f" ({error.filename})" if error.filename else ""
    return f"{error.strerror or error}{where}"


def _lock_outputs(module: types.ModuleType, name: str, outputs: Callable[[Any], List[Tuple[str, str]]]) -> None:
    """Wraps the command function `module.name(args)`: its output files checked (`check_output_file`) and each locked
    (`OUT.lock` beside it) for the command's life, before it loads anything."""
    from luke_allennlp.cli.overwrite_guard import CommandLineError

    command = getattr(module, name)
    if repaired(command):
        return

    def locked(args: Any) -> Any:
        locks = []
        try:
            seen = set()
            for option, path in outputs(args):
                if path is None or os.path.abspath(path) in seen or not check_output_file(option, path):
                    continue  # (one output given twice: the overwrite guard names it)
                seen.add(os.path.abspath(path))
                lock = lock_output(
                    path, advice=f"one writer per output: wait for it to end, or choose another {option}"
                )
                try:
                    lock.acquire()
                except OutputInUseError:
                    raise
                except OSError as error:  # (its folder takes no new file: the lock file is made there first)
                    raise CommandLineError(
                        f"{option} {path} cannot be written: no file can be made beside it ({_reason(error)})"
                    ) from None
                locks.append(lock)
            return command(args)
        finally:
            for lock in reversed(locks):
                lock.release()

    replace(module, name, locked)


def repair_predict(module: types.ModuleType) -> None:
    """`allennlp predict`'s `--output-file`: one writer, checked before the archive is loaded."""
    _lock_outputs(module, "_predict", lambda args: [("--output-file", args.output_file)])


def repair_evaluate(module: types.ModuleType) -> None:
    """`allennlp evaluate`'s metrics and predictions files: one writer each, checked before the archive is loaded."""
    _lock_outputs(module, "evaluate_from_args", evaluate_outputs)
