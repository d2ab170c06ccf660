"""
An archive's vocabulary and its weights fit each other, or the load stops in one line.

allennlp builds the model from the config and `vocabulary/` and only then loads `weights.th` into it: a vocabulary that
is not the one the weights were trained with failed in torch's `load_state_dict` with a traceback, after building
everything; and one of 2 million labels took some 1.5 GB (the vocabulary's dictionaries, a classifier layer of that
many rows) before failing. `check_vocabulary_fits` counts each namespace's entries (reading no more than its lines)
and refuses, before anything is built, a namespace larger than every dimension of every tensor of the weights (read
as a memory map, shapes only): every namespace a model uses sizes one of its tables or layers. What fits that bound
but not the model is named after building, before the weights are loaded (`state_dict_mismatch`).
"""

import os
from pathlib import Path
from typing import Any, Dict, Optional

from luke_allennlp.modeling.weights import WeightsError

VOCABULARY_DIR = "vocabulary"
NOT_A_NAMESPACE = ("non_padded_namespaces.txt",)


def namespace_sizes(directory: Any) -> Dict[str, int]:
    """`{namespace: entries}` of the archive's `vocabulary/` (lines of each `NAMESPACE.txt`), counted in chunks."""
    folder = Path(directory) / VOCABULARY_DIR
    sizes: Dict[str, int] = {}
    if not folder.is_dir():
        return sizes
    for path in sorted(folder.glob("*.txt")):
        if path.name in NOT_A_NAMESPACE:
            continue
        count, last = 0, b"\n"
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                count += chunk.count(b"\n")
                last = chunk[-1:]
        sizes[path.stem] = count + (last != b"\n")
    return sizes


def _largest_dimension(weights_path: str) -> Optional[int]:
    """The largest dimension of any tensor in the weights file (a memory map: nothing read but shapes), or None if
    it cannot be read so (the load that follows names what is wrong with it)."""
    import torch

    try:
        state = torch.load(weights_path, map_location="cpu", weights_only=True, mmap=True)
    except Exception:  # noqa: BLE001  (an old format, a damaged file: `load_weights` reports it in the build)
        return None
    dims = (
        [max(t.shape, default=1) for t in state.values() if isinstance(t, torch.Tensor)]
        if isinstance(state, dict)
        else []
    )
    return max(dims, default=None)


def check_vocabulary_fits(directory: Any, weights_path: str, archive: Any) -> None:
    """Refuses a vocabulary namespace larger than every dimension of the weights (see the module's doc)."""
    sizes = namespace_sizes(directory)
    if not sizes or not os.path.isfile(weights_path):
        return
    namespace, entries = max(sizes.items(), key=lambda item: item[1])
    largest = _largest_dimension(weights_path) if entries > 1 else None
    if largest is not None and entries > largest:
        raise WeightsError(
            f"{os.fspath(archive)} (its {VOCABULARY_DIR}/{namespace}.txt)",
            f"{entries:,} entries in the namespace {namespace!r}, more than any dimension of the weights "
            f"(at most {largest:,}): this vocabulary is not the one the weights were trained with",
        )


def state_dict_mismatch(error: RuntimeError, directory: Any, archive: Any) -> Optional[WeightsError]:
    """The one-line error for torch's (or allennlp's) failure to load the archive's weights into the model built from
    its config and vocabulary, naming the first mismatch and the vocabulary's sizes; None for other errors."""
    text = str(error)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if text.startswith("Error(s) in loading state_dict"):
        detail = next((line for line in lines if line.startswith("size mismatch")), lines[-1] if lines else text)
    elif text.startswith("Error loading state dict"):
        detail = "; ".join(lines[1:])
    else:
        return None
    sizes = ", ".join(f"{name} {count:,}" for name, count in namespace_sizes(directory).items())
    return WeightsError(
        f"{os.fspath(archive)} (its member weights.th)",
        f"does not fit the model that its config and vocabulary build ({detail.rstrip('.')}"
        + (f"; the vocabulary's namespaces: {sizes}" if sizes else "")
        + "): the vocabulary or the config is not the one the weights were trained with",
    )
