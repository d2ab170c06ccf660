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


def load_weights(path: Any, map_location: Any = "cpu", mmap: bool = False) -> Any:
    """`torch.load(path, map_location, weights_only=True)`, a failure raised as a `WeightsError` naming `path`.
    `mmap`: the tensors read from the file as mapped into memory (for a file that does not change while they are
    used, e.g. an archive's weights copied into a model)."""
    try:  # (torch.serialization's own: `luke_allennlp.cli.weights` may stand in for `torch.load` while allennlp loads)
        return torch.serialization.load(path, map_location=map_location, weights_only=True, mmap=mmap)
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


# safetensors' dtypes and their sizes in bytes (its format's names).
SAFETENSORS_DTYPES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip
SAFETENSORS_MAX_HEADER = 100 << 20  # safetensors' own limit on the JSON header


def check_safetensors(path: Any) -> None:
    """
    Raises a `WeightsError` naming `path` if it is not a whole safetensors file: the header's length within the file
    and safetensors' limit, the header a JSON object, each tensor's byte range
    inside the data and as long as its dtype and shape say. safetensors itself reports these with a traceback
    (`SafetensorError: header too large`); this reads the header only, before anything loads the file.
    """
    import json
    import math
    import struct

    name = os.fspath(path)
    size = os.path.getsize(name)

    def damaged(what: str) -> WeightsError:
        return WeightsError(name, f"not a whole safetensors file, it is truncated or damaged ({what})")

    with open(name, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise damaged(f"{size} bytes, shorter than a header")
        length = struct.unpack("<Q", head)[0]
        if length > min(size - 8, SAFETENSORS_MAX_HEADER):
            raise damaged(f"a header of {length:,} bytes in a file of {size:,}")
        text = f.read(length)
    try:
        header = json.loads(text)
    except (ValueError, RecursionError) as error:  # (nested too deep for Python's parser: a RecursionError)
        raise damaged(f"its header is not JSON: {str(error)[:80]}") from None
    if not isinstance(header, dict):
        raise damaged("its header is not a JSON object")
    data = size - 8 - length
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        itemsize = SAFETENSORS_DTYPES.get(entry.get("dtype")) if isinstance(entry, dict) else None
        valid = (
            itemsize is not None
            and isinstance(shape, list)
            and all(isinstance(d, int) and d >= 0 for d in shape)
            and isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) for o in offsets)
        )
        if not valid:
            raise damaged(f"the tensor {key!r} has no valid dtype, shape and data_offsets")
        begin, end = offsets
        if not 0 <= begin <= end <= data:
            raise damaged(f"the tensor {key!r} lies at bytes {begin:,}-{end:,} of data {data:,} bytes long")
        if end - begin != math.prod(shape) * itemsize:
            raise damaged(f"the tensor {key!r} of shape {shape} takes {end - begin:,} bytes")
