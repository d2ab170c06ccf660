"""
Repair 12: an output that would overwrite an input is refused.

`allennlp predict IN --output-file IN` emptied the input (allennlp opens the output for writing before it reads the
input), and `allennlp evaluate DATA --predictions-output-file DATA` replaced the data with predictions. Before a command
loads anything, an output path that is one of its inputs (the archive, the data), the same file under another name (a
symbolic or hard link), or the other output, is refused with a `CommandLineError`. Also: `evaluate` logged the data's
stem ("Reading evaluation data from eng" for `eng.testa`); it logs the path.

Proved by tests/luke_allennlp_compat/test_overwrite_guard.py:
`test_an_output_that_is_an_input_is_refused_before_anything_is_written`, and the log line by
`test_allennlp_command_trains_evaluates_predicts_and_recovers` (test_commands.py).
"""

import logging
import types
from typing import Any, Callable, List, Optional, Tuple


class CommandLineError(ValueError):
    """Arguments of an `allennlp` command that cannot work together."""

    user_error = True  # the `allennlp` command prints it as one line (repair 8)


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
