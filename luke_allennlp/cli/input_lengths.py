"""
A reader's inputs fit the model's position embeddings, checked when both are built.

A dataset reader whose `max_seq_length` is longer than the model's position embeddings cover (700 words for RoBERTa's
514 positions, 512 words) trained or predicted until the first long enough input, then stopped with torch's bare
`IndexError: index out of range in self` inside the forward pass. Here `allennlp train` checks its readers against the
model once both are built, before the first step (`TrainModel.__init__`: the trainer's data loaders hold the
readers), and `load_archive` (`predict`, `evaluate`, `-o '{"dataset_reader.max_seq_length": ...}'`) the archive's
readers against its model, with one line naming the setting and the longest it may be. The encoder itself refuses a
longer input with the same advice (`LukeEmbeddings`), for readers that do not say how long theirs are.
"""

import types
from typing import Any, Dict, Iterator, Optional, Tuple

from luke_allennlp_compat.patch import repaired, replace


class InputLengthError(ValueError):
    """A reader's longest input is longer than the model's position embeddings cover."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)


def longest_model_input(model: Any) -> Optional[Tuple[int, int]]:
    """The most words the model's word position embeddings cover, and their number of positions (None: no absolute
    position embeddings, e.g. XLNet). RoBERTa-style embeddings (a `padding_idx`) count positions from
    `padding_idx + 1`, BERT's from 0."""
    import torch

    found = None
    for name, module in model.named_modules():
        positions = getattr(module, "position_embeddings", None)
        if not isinstance(positions, torch.nn.Embedding) or "entity" in name.lower() + type(module).__name__.lower():
            continue
        padding = getattr(module, "padding_idx", None)
        words = positions.num_embeddings - (padding + 1 if isinstance(padding, int) else 0)
        if found is None or words < found[0]:
            found = (words, positions.num_embeddings)
    return found


def reader_lengths(readers: Dict[str, Any]) -> Iterator[Tuple[str, int]]:
    """Each reader's setting name and its longest input (`max_seq_length`, where the reader says it)."""
    seen = set()
    for setting, reader in readers.items():
        length = getattr(reader, "max_seq_length", None)
        if reader is None or id(reader) in seen or not isinstance(length, int) or isinstance(length, bool):
            continue
        seen.add(id(reader))
        yield setting, length


def check_input_lengths(model: Any, readers: Dict[str, Any]) -> None:
    """Raises an `InputLengthError` where a reader's `max_seq_length` exceeds what `model` can embed."""
    limit = longest_model_input(model)
    if limit is None:
        return
    words, positions = limit
    for setting, length in reader_lengths(readers):
        if length > words:
            raise InputLengthError(
                f"{setting}.max_seq_length is {length}, but the model's position embeddings cover {words} words "
                f"(max_position_embeddings {positions}): inputs longer than that would fail inside the model; set "
                f"{setting}.max_seq_length to at most {words}"
            )


def repair_train(module: types.ModuleType) -> None:
    """`TrainModel` checks its readers (its trainer's data loaders') against its model when it is built."""
    train_model = module.TrainModel
    init = train_model.__init__
    if repaired(init):
        return

    def checked_init(self: Any, serialization_dir: str, model: Any, trainer: Any, *args: Any, **kwargs: Any) -> None:
        init(self, serialization_dir, model, trainer, *args, **kwargs)
        loaders = {
            "dataset_reader": getattr(trainer, "data_loader", None),
            "validation_dataset_reader": getattr(trainer, "_validation_data_loader", None),
        }
        check_input_lengths(model, {name: getattr(loader, "reader", None) for name, loader in loaders.items()})

    replace(train_model, "__init__", checked_init)


def repair_load_archive(module: types.ModuleType) -> None:
    """allennlp's `load_archive` checks the archive's readers against its model."""
    load_archive = module.load_archive
    if repaired(load_archive):
        return

    def checked_load_archive(*args: Any, **kwargs: Any) -> Any:
        archive = load_archive(*args, **kwargs)
        check_input_lengths(
            archive.model,
            {
                "dataset_reader": archive.dataset_reader,
                "validation_dataset_reader": archive.validation_dataset_reader,
            },
        )
        return archive

    replace(module, "load_archive", checked_load_archive)
