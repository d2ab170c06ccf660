"""The common part of the readers whose instances mark mentions in one text (relation classification, entity typing)."""

from collections import Counter
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from allennlp.data import Instance

from luke_allennlp.data.inputs import MentionInputs, UnusableExample
from luke_allennlp.data.sources import Columns, SourceReader
from luke_allennlp.resources.checkpoint_tokenizer import max_mention_length
from luke_allennlp.resources.hf_datasets import Rows
from luke_allennlp.resources.tokenization import load_fast_tokenizer


class MentionTaskReader(SourceReader):
    """
    A reader whose examples are texts with marked mentions, built by `MentionInputs`. A subclass parses its files
    (`read_examples(path, name)` yields tuples whose first item is the example id) and the rows of datasets
    (`dataset_examples(rows)`, the same tuples), and makes an instance of the rest
    (`text_to_instance(*rest, example_id=...)`). Reading a file counts what is cut and skipped in `stats`
    (examples that `UnusableExample` refuses are skipped), logs it, and refuses a file without examples.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`
        Subwords per input, special tokens included.
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each of the reader's roles (`ROLES`) that is not under its default name.
    label_names : `List[str]`, optional (default = `None`)
        Datasets whose labels are integers without `ClassLabel` names: the label of each integer, in order.
    """

    NAME = ""  # the registered name, for messages
    ROLES: Dict[str, Sequence[str]] = {}  # role -> its default column names

    def __init__(
        self,
        model_name: str,
        max_seq_length: int,
        columns: Optional[Dict[str, str]] = None,
        label_names: Optional[List[str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.columns = Columns(self.NAME, self.ROLES, columns)
        self.label_names = label_names
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        self.tokenizer = load_fast_tokenizer(model_name)
        # Counts the mentions whose entity the `luke` embedder gives only their first subwords' positions.
        self.inputs = MentionInputs(self.tokenizer, max_seq_length, max_mention_length(model_name))

    @property
    def stats(self) -> Counter:
        """What the last read encoded, cut and skipped (see `MentionInputs`)."""
        return self.inputs.stats

    @property
    def truncated(self) -> int:
        """Inputs cut to `max_seq_length` around their mentions since the last read began."""
        return self.inputs.stats["truncated_inputs"]

    def read_examples(self, path: str, name: Optional[str] = None) -> Iterator[Tuple]:
        raise NotImplementedError

    def dataset_examples(self, rows: Rows) -> Iterator[Tuple]:
        raise NotImplementedError

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.inputs.reset_stats()
        examples = self.read_source(file_path, self.read_examples, self.dataset_examples)
        for example_id, *example in self.shard_iterable(examples):
            try:
                instance = self.text_to_instance(*example, example_id=example_id)
            except UnusableExample as error:
                self.inputs.skip(error)
                continue
            yield instance
        self.inputs.log_stats(file_path)
