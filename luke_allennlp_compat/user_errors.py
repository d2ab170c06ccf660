"""
Repair 8: an error meant for the user is one line, not a traceback.

An input error says all the user needs in its message (the file, the line, what is wrong). allennlp's command printed
it under a traceback of some 40-200 lines (`allennlp.commands.main` lets every exception through). `main` is wrapped so
that it prints "allennlp: error: MESSAGE" on stderr and exits with status 1 (the traceback goes to the log at DEBUG
level, and ALLENNLP_DEBUG=1, allennlp's own debug variable, lets it through). User errors are, in an exception's chain:

- an exception whose class sets `user_error = True` (`ArchiveError`, `WeightsError`, `CommandLineError` here,
  `luke_allennlp.modeling.loading.HubUnavailableError`: a hub name without a network, `RecoveryError`, ...);
- one that this project raises on purpose: a `raise` statement in `luke_allennlp`, the readers' package or this
  package (the readers' "FILE:LINE: ..." errors, bad configuration values, wrong formats), not an error inside a call
  it makes (a bug keeps its traceback);
- a missing or unreadable file or directory (`FileNotFoundError` and its kin, e.g. cached_path's "file X not found"),
  allennlp's own `ConfigurationError` without an underlying cause, and a config that Jsonnet cannot evaluate (a syntax
  error, an undefined `std.extVar` variable: `one_line` keeps its location, not its trace).

Any other exception is left to allennlp.

Proved by tests/luke_allennlp_compat/test_user_errors.py: `test_known_input_errors_are_one_line_and_allennlp_debug_shows_the_traceback`,
`test_errors_raised_on_purpose_by_the_project_are_user_errors`, `test_user_error_is_found_in_the_exception_chain`,
`test_a_bad_line_in_the_training_data_stops_allennlp_train_with_one_line`.
"""

import sys
import types
from typing import Optional, Tuple

from luke_allennlp_compat._patch import logger, repaired, replace
from luke_allennlp_compat.plugins import PLUGIN

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
    return " ".join(str(text).split()) or type(error).__name__


def user_error(error: BaseException) -> Optional[BaseException]:
    """The first exception in `error`'s chain (itself, its cause, its context) that is meant for the user."""
    seen = set()
    while error is not None and id(error) not in seen:
        if getattr(type(error), "user_error", False) or _raised_on_purpose(error) or isinstance(error, PATH_ERRORS):
            return error
        if type(error).__name__ == "ConfigurationError" and error.__cause__ is None:
            return error
        if isinstance(error, RuntimeError) and str(error).startswith(JSONNET_ERRORS):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


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


def repair_commands(module: types.ModuleType) -> None:
    import os

    main = module.main
    if repaired(main):
        return

    def patched_main(prog: Optional[str] = None) -> None:
        try:
            main(prog)
        except Exception as error:
            shown = user_error(error)
            if shown is None or os.environ.get("ALLENNLP_DEBUG"):
                raise
            logger.debug("stopped by a user error", exc_info=error)
            sys.stderr.write(f"{prog or 'allennlp'}: error: {one_line(shown)}\n")
            sys.exit(1)

    replace(module, "main", patched_main)
