"""
Weights files read as data: `torch.load(..., weights_only=True)` passed explicitly (so that
`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1` cannot turn unpickling of arbitrary objects back on), and a file that does not
load raised as a `WeightsError` naming it. Plain PyTorch: the checkpoint loader, the checkpointer, archives and
allennlp's own loads (`luke_allennlp.cli.weights`) all read weights through `load_weights`.
"""

import os
import pickle
from typing import Any

import torch

# Said as they are: the path is wrong, not the file.
PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)


class WeightsError(ValueError):
    """A weights file that cannot be loaded: damaged, not a PyTorch file, or holding more than tensors."""

    user_error = True  # the `allennlp` command prints it as one line

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason

    def inside(self, archive: Any, directory: Any) -> "WeightsError":
        """The same error for the member of `archive` (extracted into `directory`) that it is about."""
        member = os.path.relpath(self.path, os.fspath(directory))
        return WeightsError(f"{os.fspath(archive)} (its member {member})", self.reason)


def load_weights(path: Any, map_location: Any = "cpu") -> Any:
    """`torch.load(path, map_location, weights_only=True)`, a failure raised as a `WeightsError` naming `path`."""
    try:  # (torch.serialization's own: `luke_allennlp.cli.weights` may stand in for `torch.load` while allennlp loads)
        return torch.serialization.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        detail = [line.strip() for line in str(error).splitlines() if "WeightsUnpickler error:" in line]
        reason = detail[0].split(":", 1)[1].strip() if detail else str(error).splitlines()[0]
        raise WeightsError(
            os.fspath(path),
            f"refused: it holds Python objects that are not weights ({reason.split('. ')[0]}); weights are loaded "
            "with weights_only=True whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says",
        ) from error
    except (RuntimeError, EOFError, KeyError, ValueError, OSError) as error:
        if isinstance(error, PATH_ERRORS):
            raise
        first = (str(error).splitlines() or [""])[0].split(". ")[0]
        raise WeightsError(
            os.fspath(path),
            f"cannot be read as PyTorch weights, it is truncated or damaged ({type(error).__name__}: {first})",
        ) from error
