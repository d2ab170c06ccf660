"""
An error meant for the user is one line, not a traceback.

An input error says all the user needs in its message (the file, the line, what is wrong). allennlp's command printed
it under a traceback of some 40-200 lines (`allennlp.commands.main` lets every exception through). `main` is wrapped so
that it prints "allennlp: error: MESSAGE" on stderr and exits with status 1 (the traceback goes to the log at DEBUG
level, and ALLENNLP_DEBUG=1, allennlp's own debug variable, lets it through). User errors are, in an exception's chain:

- an exception whose class sets `user_error = True` (`ArchiveError`, `WeightsError`, `CommandLineError`,
  `luke_allennlp.modeling.checkpoint_files.HubUnavailableError`: a hub name without a network, `RecoveryError`, ...);
- one that this project raises on purpose: a `raise` statement in `luke_allennlp` or the readers' package
  (the readers' "FILE:LINE: ..." errors, bad configuration values, wrong formats), not an error inside a call
  it makes (a bug keeps its traceback);
- a missing or unreadable file or directory (`FileNotFoundError` and its kin, e.g. cached_path's "file X not found"),
  allennlp's own `ConfigurationError` without an underlying cause, and a config that Jsonnet cannot evaluate (a syntax
  error, an undefined `std.extVar` variable: `one_line` keeps its location, not its trace);
- a full disk anywhere in the chain, first (`ENOSPC`, `EDQUOT`, or said without an errno: SQLite's "database or disk
  is full"; torch's checkpoint writer reports it as `unexpected pos`, the `OSError` chained): "no space left on device
  writing FILE", and for `train` the state of the serialization directory (`interruption_state`);
- allennlp's "Expected num_epochs to be a int." of a config value of the wrong type (`config_checks` refuses those
  before `train` starts; this names the rest, e.g. in `evaluate -o`).

An interruption is one line too: SIGTERM, SIGHUP (both raise `Interrupted`, a `SigTermReceived`, so that allennlp's
`train` still archives the best weights so far) and Ctrl-C (`KeyboardInterrupt`) stop the command with "allennlp:
error: train interrupted by SIGTERM while training: ..." saying what is left: for `train`, the last checkpoint (intact:
checkpoints and archives are written under a temporary name and renamed) and that `allennlp train --recover -s DIR`
resumes from it; for `predict` and `evaluate`, the partial `--output-file` / `--predictions-output-file` renamed
`FILE.partial` (not left as if complete, and holding every prediction written before: `repair_evaluator` closes
the predictions file of `evaluate`); the builders remove what they had written; `seeds` and `tune` keep what ended
and resume when run again. The exit status is 128 + the
signal's number (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a process killed by it. allennlp's own
handlers are restored when `main` returns. The data loader's worker processes ignore Ctrl-C and SIGHUP, which reach
the whole process group (each printed a traceback of its own), and exit on SIGTERM. (The workers also read an
`endless` reader one pass unless the loader draws `batches_per_epoch` batches lazily: `finite_reads`.)

Any other exception is left to allennlp.
"""

import os
import re
import signal
import sys
import types
from typing import Any, List, Optional, Tuple

from luke_allennlp.cli import interruptions, logger
from luke_allennlp.cli.plugins import PLUGIN
from luke_allennlp.resources.output import DiskFullError, disk_full, worker_signals
from luke_allennlp_compat.patch import repaired, replace

PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
JSONNET_ERRORS = ("RUNTIME ERROR: ", "STATIC ERROR: ")  # a config that does not evaluate (RuntimeError of _jsonnet)


def one_line(error: BaseException) -> str:
    """A user error's message on one line: a KeyError's without quotes, a Jsonnet error as `FILE:LINE:COL: what`
    (its stack trace dropped), an undefined `std.extVar` variable with what to do."""
    text = error.args[0] if isinstance(error, KeyError) and len(error.args) == 1 else str(error)
    if isinstance(error, RuntimeError) and text.startswith(JSONNET_ERRORS):
        what, *trace = text.split("\n")
        kind, what = what.split(": ", 1)
        if kind == "RUNTIME ERROR" and trace and trace[0].strip():
            what = f"{trace[0].split()[0]}: {what}"  # the innermost location
        if "undefined external variable: " in what:
            variable = what.rsplit(": ", 1)[1]
            what += f" (the config reads it with std.extVar: set it in the environment, e.g. {variable}=...)"
        text = what
    wrong_type = WRONG_TYPE.match(text) if isinstance(error, TypeError) else None
    if wrong_type:
        kind = {"a int": "an integer", "numeric": "a number", "a bool": "true or false"}.get(wrong_type.group(2))
        text = f"the config's {wrong_type.group(1)} must be {kind or wrong_type.group(2)}, not a value of another type"
    return " ".join(str(text).split()) or type(error).__name__


WRONG_TYPE = re.compile(r"Expected (\w+) to be (a \w+|numeric)\.$")  # allennlp's from_params, for a config value


def user_error(error: BaseException) -> Optional[BaseException]:
    """The first exception in `error`'s chain (itself, its cause, its context) that is meant for the user; a full
    disk anywhere in the chain first (it is the cause of whatever else failed)."""
    full = disk_full(error)
    if full is not None:
        return full if isinstance(full, DiskFullError) else DiskFullError(full.errno, full.strerror, full.filename)
    seen = set()
    while error is not None and id(error) not in seen:
        if getattr(type(error), "user_error", False) or _raised_on_purpose(error) or isinstance(error, PATH_ERRORS):
            return error
        if type(error).__name__ == "ConfigurationError" and error.__cause__ is None:
            return error
        if isinstance(error, RuntimeError) and str(error).startswith(JSONNET_ERRORS):
            return error
        if isinstance(error, TypeError) and WRONG_TYPE.match(str(error)) and _raised_in(error, "from_params.py"):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _raised_in(error: BaseException, file_name: str) -> bool:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.basename(tb.tb_frame.f_code.co_filename) == file_name


def _project_files() -> Tuple[str, ...]:
    """This package's directory and those of this project's packages (as far as they are imported)."""
    import os

    packages = [sys.modules.get(name) for name in ("luke_allennlp", "data_readers", PLUGIN)]
    roots = [os.path.dirname(getattr(m, "__file__", None) or "") + os.sep for m in packages if m is not None]
    return (os.path.dirname(__file__) + os.sep, *[root for root in roots if root != os.sep])


def _raised_on_purpose(error: BaseException) -> bool:
    """Whether a `raise` statement of this project raised `error` (the innermost frame of its traceback is this
    project's code, stopped at a RAISE instruction: not inside a call of something else)."""
    import dis

    tb = error.__traceback__
    if tb is None or isinstance(error, (AssertionError, NotImplementedError)):
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not code.co_filename.startswith(_project_files()):
        return False
    return any(i.offset == tb.tb_lasti and i.opname == "RAISE_VARARGS" for i in dis.get_instructions(code))


CHECKPOINT = re.compile(r"model_state_e(\d+)_b(\d+)(?:_w\d+)?\.th$")
# Innermost frames' functions -> what the command was doing (the innermost match wins).
PHASES = {
    "_read": "reading the data",
    "read": "reading the data",
    "_try_train": "training",
    "_train_epoch": "training",
    "_validation_loss": "validating",
    "save_checkpoint": "saving a checkpoint",
    "archive_model": "writing the archive",
    "evaluate": "evaluating",
    "predict": "predicting",
    "_predict_instances": "predicting",
    "_predict_json": "predicting",
    "save": "writing the output",
}


def interruption(error: Optional[BaseException]) -> Optional[BaseException]:
    """The `KeyboardInterrupt` or `SigTermReceived` in `error`'s chain (a signal may arrive in code that wraps it)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt) or any(c.__name__ == "SigTermReceived" for c in type(error).__mro__):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _raise_interrupted(signum: int, frame: Any) -> None:
    raise interruptions.record(signum)


def _option(argv: List[str], *names: str) -> Optional[str]:
    """The value of the last of `names` in `argv` (`-s DIR`, `--serialization-dir DIR` or `--serialization-dir=DIR`)."""
    value = None
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(name + "=") and name.startswith("--"):
                value = arg[len(name) + 1 :]
    return value


def _phase(error: BaseException, interrupted: BaseException) -> str:
    """What the command was doing: the innermost frame named in `PHASES` of the traceback of `error` and then of
    the interruption in its chain (caught and wrapped further in)."""
    phase = "running"
    for tb in (error.__traceback__, interrupted.__traceback__ if interrupted is not error else None):
        while tb is not None:
            name = tb.tb_frame.f_code.co_name
            reader = type(tb.tb_frame.f_locals.get("self")).__name__.endswith("Reader")
            if name in PHASES and (reader or name not in ("read", "_read")):  # (not any file's `read`)
                phase = PHASES[name]
            tb = tb.tb_next
    return phase


def training_state(directory: Optional[str], started: float) -> str:
    """What a stopped `train` leaves in its serialization directory: the last checkpoint (and that `--recover` resumes
    from it), the archive of the best weights so far."""
    if directory is None or not os.path.isdir(directory):
        return "nothing was written"
    files = set(os.listdir(directory))
    points = [
        (int(m.group(1)), int(m.group(2)))
        for m in map(CHECKPOINT.match, files)
        if m and m.group(0).replace("model_state", "training_state") in files
    ]
    archive = os.path.join(directory, "model.tar.gz")
    archived = os.path.exists(archive) and os.path.getmtime(archive) >= started
    kept = f"; {archive} holds the best weights so far, not those of a finished run" if archived else ""
    if not points:
        return f"no checkpoint was saved in {directory} yet{kept}: nothing to resume, start again"
    epochs, batches = max(points)
    at = f"{epochs} epoch(s)" + (f" and {batches} batch(es)" if batches else "")
    return (
        f"the last checkpoint in {directory} (after {at}) is intact{kept}: "
        f"`allennlp train --recover -s {directory}` resumes from it"
    )


def interruption_state(command: str, argv: List[str], started: float) -> str:
    """What an interrupted (or failed) command leaves behind, and what to do: for `train`, its serialization
    directory's last checkpoint and `--recover`; for `predict` / `evaluate`, their partial outputs (renamed
    `FILE.partial`, so that nothing is left as if complete)."""
    if command == "train":
        return training_state(_option(argv, "-s", "--serialization-dir"), started)
    if command in ("predict", "evaluate"):
        moved = []
        for option in ("--output-file", "--predictions-output-file"):
            path = _option(argv, option)
            if path and os.path.isfile(path) and os.path.getmtime(path) >= started:
                os.replace(path, path + ".partial")
                moved.append(f"{path}.partial")
        if moved:
            return f"what was written so far is in {' and '.join(moved)} (incomplete): run the command again"
        return "no output was written: run the command again"
    if command == "seeds":
        return "the finished seeds are kept, the interrupted ones resume from their last checkpoint: run the same command again"
    if command == "tune":
        return "the study keeps its ended trials (those that were running are failed): run the command again to go on"
    return "no output is left as if complete (outputs are written whole, or removed): run the command again"


def repair_commands(module: types.ModuleType) -> None:
    import threading
    import time

    main = module.main
    if repaired(main):
        return

    def patched_main(prog: Optional[str] = None) -> None:
        argv = sys.argv[1:]
        command = next((arg for arg in argv if not arg.startswith("-")), "")
        started = time.time() - 1  # (file times may be rounded down to the second)
        handlers = {}
        name = f"{prog or 'allennlp'}"
        interruptions.clear()
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGTERM, signal.SIGHUP):
                handlers[signum] = signal.signal(signum, _raise_interrupted)
        try:
            main(prog)
            if interruptions.pending() is not None:  # caught on the way and never raised again: stop as signalled
                raise interruptions.interrupted_class()(interruptions.pending())
        except (KeyboardInterrupt, Exception) as error:
            # (A signal that code caught and reworded, e.g. into a RuntimeError, is still what stopped the command.)
            interrupted = interruption(error)
            if interrupted is None and interruptions.pending() is not None:
                interrupted = interruptions.interrupted_class()(interruptions.pending())
            interruptions.clear()
            if os.environ.get("ALLENNLP_DEBUG"):
                raise
            if interrupted is not None:
                signum = getattr(
                    interrupted,
                    "signum",
                    signal.SIGINT if isinstance(interrupted, KeyboardInterrupt) else signal.SIGTERM,
                )
                logger.debug("interrupted", exc_info=error)
                sys.stderr.write(
                    f"{name}: error: {command} interrupted by {signal.Signals(signum).name} while {_phase(error, interrupted)}; "
                    f"{interruption_state(command, argv, started)}\n"
                )
                sys.exit(128 + signum)
            shown = user_error(error)
            if shown is None:
                raise
            logger.debug("stopped by a user error", exc_info=error)
            message = one_line(shown)
            if isinstance(shown, DiskFullError) and command == "train":
                message += f"; {interruption_state(command, argv, started)}"
            sys.stderr.write(f"{name}: error: {message}\n")
            sys.exit(1)
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, handler)

    replace(module, "main", patched_main)


def repair_evaluator(module: types.ModuleType) -> None:
    """allennlp's `SimpleEvaluator` closed its predictions file (`evaluate --predictions-output-file`) only after the
    last batch: stopped by an interruption or an error, the predictions written so far stayed in the file's buffer and
    the file was left empty. It is closed whatever happens, so they are kept (in `FILE.partial` after an interruption:
    `interruption_state`)."""
    evaluator = module.SimpleEvaluator
    if repaired(evaluator.__call__):
        return
    call = evaluator.__call__

    def evaluate(self: Any, *args: Any, **kwargs: Any) -> Any:  # (so named for `PHASES`: "while evaluating")
        try:
            return call(self, *args, **kwargs)
        except BaseException as error:
            tb = error.__traceback__
            while tb is not None:  # the file is a local of allennlp's `__call__`
                predictions = (
                    tb.tb_frame.f_locals.get("predictions_file") if tb.tb_frame.f_code is call.__code__ else None
                )
                if predictions is not None and not predictions.closed:
                    predictions.close()
                tb = tb.tb_next
            raise

    replace(evaluator, "__call__", evaluate)


def finite_reads(loader: Any) -> None:
    """In a data loader's worker process: a reader that reads pass after pass without end (`endless`, the pretraining
    reader's) does so only for a loader that draws `batches_per_epoch` batches lazily (`max_instances_in_memory`);
    any other loader waits for the reader to end (its epoch, or its loading of every instance into memory, would never
    end), so there it reads one pass. The worker's copy of the reader is changed, not the main process's."""
    if getattr(loader.reader, "endless", False) is True and (
        loader.batches_per_epoch is None or loader.max_instances_in_memory is None
    ):
        loader.reader.endless = False


def repair_data_loader_workers(module: types.ModuleType) -> None:
    """allennlp's `MultiProcessDataLoader` workers (`num_workers` > 0, e.g. the pretraining configs) each printed a
    KeyboardInterrupt traceback on Ctrl-C: they now leave signals to the main process (`worker_signals`)."""
    loader = module.MultiProcessDataLoader
    for name in ("_instance_worker", "_batch_worker"):
        worker = getattr(loader, name)
        if repaired(worker):
            continue

        def patched_worker(self: Any, *args: Any, _worker: Any = worker) -> None:
            worker_signals()
            finite_reads(self)
            _worker(self, *args)

        replace(loader, name, patched_worker)


def repair_trainer_interruptions(module: types.ModuleType) -> None:
    """allennlp's trainer raises, before each batch, a signal that code caught and went on from (`interruptions`);
    the project's trainer calls this `batch_outputs` too."""
    trainer = module.GradientDescentTrainer
    batch_outputs = trainer.batch_outputs
    if repaired(batch_outputs):
        return

    def checked_batch_outputs(self: Any, *args: Any, **kwargs: Any) -> Any:
        interruptions.raise_pending()
        return batch_outputs(self, *args, **kwargs)

    replace(trainer, "batch_outputs", checked_batch_outputs)
