"""
Optional dependencies, installed with the package's extras (`setup.cfg`): `tracking` (MLflow, Weights & Biases, the
TensorBoard viewer and reader) and `plot` (matplotlib, TensorBoard's event reader). What needs one imports it through
`require`, which says in one line which extra to install when it is missing.
"""

import importlib
import types


class MissingExtraError(ImportError):
    """An optional dependency that is not installed, with the extra that installs it."""

    user_error = True  # the `allennlp` command prints it as one line


def require(module: str, extra: str, purpose: str) -> types.ModuleType:
    """`module` imported, or a `MissingExtraError` naming `extra` (`purpose`: what needs it, e.g. "the mlflow
    callback")."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        package = module.split(".")[0]
        raise MissingExtraError(
            f"{purpose} needs {package}, which is not installed: pip install 'luke_allennlp[{extra}]' "
            f"(or `make install` in a checkout)"
        ) from e
