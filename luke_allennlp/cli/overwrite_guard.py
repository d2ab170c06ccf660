"""
An output that would overwrite an input is refused.

`allennlp predict IN --output-file IN` emptied the input (allennlp opens the output for writing before it reads the
input), and `allennlp evaluate DATA --predictions-output-file DATA` replaced the data with predictions. Before a command
loads anything, an output path that is one of its inputs (the archive, the data), the same file under another name (a
symbolic or hard link), or the other output, is refused with a `CommandLineError`. Also: `evaluate` logged the data's
stem ("Reading evaluation data from eng" for `eng.testa`); it logs the path. And `allennlp train` into an existing
`-s` directory: the error advised `--recover` even where no checkpoint exists (after a run that failed before its
first one); it names `-f`, and `--recover` only where a checkpoint exists. `--recover` with other settings (another
`-o`) raised a `KeyError` for a setting only one configuration has, after an ERROR line per setting; it is one error
naming each setting that differs, with both values.
"""

import logging
import types
from typing import Any, Callable, List, Optional, Tuple

from luke_allennlp_compat.patch import repaired, replace


class CommandLineError(ValueError):
    """Arguments of an `allennlp` command that cannot work together."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)


def refuse_overwriting_inputs(inputs: List[Tuple[str, Any]], outputs: List[Tuple[str, Any]]) -> None:
    """Raises a `CommandLineError` if an output (`(option, path)`) is the same file as an input or an earlier output
    (`(what, path)`, paths that do not exist are skipped: a URL, "-", an output yet to be written)."""
    import os

    def same(a: Any, b: Any) -> bool:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)

    for i, (option, output) in enumerate(outputs):
        if output is None:
            continue
        for what, path in [*inputs, *outputs[:i]]:
            if path is not None and (os.path.abspath(output) == os.path.abspath(path) or same(output, path)):
                how = "" if os.path.abspath(output) == os.path.abspath(path) else f" ({path}, through a link)"
                raise CommandLineError(
                    f"{option} {output} is {what}{how}: writing it would destroy it; choose another {option}"
                )


def _guard_command(module: types.ModuleType, name: str, paths: Callable[[Any], Tuple[List, List]]) -> None:
    """Wraps the command function `module.name(args)` with `refuse_overwriting_inputs(*paths(args))`."""
    command = getattr(module, name)
    if getattr(command, "__luke_allennlp_compat_guarded__", False):
        return

    def guarded(args: Any) -> Any:
        refuse_overwriting_inputs(*paths(args))
        return command(args)

    guarded.__doc__ = command.__doc__
    guarded.__luke_allennlp_compat_guarded__ = True  # type: ignore[attr-defined]
    setattr(module, name, guarded)


def _split(paths: Optional[str]) -> List[str]:
    return [p for p in paths.split(",") if p] if paths else []


class _EvaluationDataPath(logging.Filter):
    """allennlp's evaluate logs "Reading evaluation data from eng" for `eng.testa` (the file's stem): the path of
    the input file of that stem is logged instead."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: List[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "Reading evaluation data from %s" and isinstance(record.args, tuple) and record.args:
            import pathlib

            stems = [p for p in self.paths if pathlib.Path(p).stem == record.args[0]]
            if stems:
                record.args = (stems[0],)
        return True


def repair_evaluate(module: types.ModuleType) -> None:
    named = _EvaluationDataPath()
    module.logger.addFilter(named)

    def paths(args: Any) -> Tuple[List, List]:
        named.paths = _split(args.input_file)
        inputs = [("the archive", args.archive_file)] + [("the input file", p) for p in named.paths]
        outputs = [("--output-file", p) for p in _split(args.output_file)]
        outputs += [("--predictions-output-file", p) for p in _split(args.predictions_output_file)]
        return inputs, outputs

    _guard_command(module, "evaluate_from_args", paths)


def guard_predict(module: types.ModuleType) -> None:
    def paths(args: Any) -> Tuple[List, List]:
        return [("the archive", args.archive_file), ("the input file", args.input_file)], [
            ("--output-file", args.output_file)
        ]

    _guard_command(module, "_predict", paths)


def _checkpoint_in(directory: str) -> Optional[str]:
    """The newest training-state checkpoint that `--recover` would continue from (None: nothing to recover)."""
    import os
    import re

    states = [name for name in os.listdir(directory) if re.fullmatch(r"training_state_e\d+_b\d+(_w\d+)?\.th", name)]
    return max(states, key=lambda name: os.path.getmtime(os.path.join(directory, name))) if states else None


def _differences(now: dict, before: dict) -> List[str]:
    """The settings (flat keys) that differ between two configurations, each with both values."""
    missing = object()
    lines = []
    for key in sorted(now.keys() | before.keys()):
        new, old = now.get(key, missing), before.get(key, missing)
        if new != old:
            lines.append(
                f"{key}: {'(unset)' if old is missing else repr(old)} before, "
                f"{'(unset)' if new is missing else repr(new)} now"
            )
    return lines


def repair_serialization_dir(module: types.ModuleType) -> None:
    """`create_serialization_dir` of `allennlp.training.util`: an existing directory's error names `-f` (and
    `--recover` only where a checkpoint exists); `--recover` with other settings says which differ (it raised a
    `KeyError` for a setting only one of the two configurations has, and logged an ERROR line per setting)."""
    create = module.create_serialization_dir
    if repaired(create):
        return

    def create_serialization_dir(params: Any, serialization_dir: Any, recover: bool, force: bool) -> None:
        import os

        from allennlp.common.checks import ConfigurationError
        from allennlp.common.params import Params

        directory = os.fspath(serialization_dir)
        exists = os.path.isdir(directory) and bool(os.listdir(directory))
        if exists and not force and not recover:
            checkpoint = _checkpoint_in(directory)
            recover_hint = (
                f", or --recover to continue its training from its last checkpoint ({checkpoint})" if checkpoint else ""
            )
            raise ConfigurationError(
                f"serialization directory {directory} already exists and is not empty: pass -f (--force) to delete it "
                f"and train afresh{recover_hint}, or choose another -s"
            )
        if exists and recover and not force:
            config = os.path.join(directory, "config.json")
            if os.path.exists(config):
                differing = _differences(params.as_flat_dict(), Params.from_file(config).as_flat_dict())
                if differing:
                    raise ConfigurationError(
                        f"--recover: the settings differ from those {directory} was trained with ({config}): "
                        f"{'; '.join(differing)}. Recover with the same configuration and -o, or pass -f instead of "
                        "--recover to train afresh"
                    )
        return create(params, serialization_dir, recover, force)

    replace(module, "create_serialization_dir", create_serialization_dir)
