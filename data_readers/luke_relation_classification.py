import json
import logging
import re
from typing import Iterator, List, Optional, Tuple

import numpy as np
import torch
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import LabelField, MetadataField, TensorField

from luke_allennlp.data.entities import TASK_ENTITY_VOCAB
from luke_allennlp.data.tokenization import load_fast_tokenizer, special_token_layout

logger = logging.getLogger(__name__)

CharSpan = Tuple[int, int]  # characters, end exclusive
TAGGED = re.compile(r"<(/?)(e[12])>")
# Entity markers inserted around the mentions when `use_entity_markers` is on (a baseline option).
HEAD_MARKERS, TAIL_MARKERS = ("@", "@"), ("#", "#")


def parse_tagged(sentence: str, where: str) -> Tuple[str, CharSpan, CharSpan]:
    """`... <e1>x</e1> ... <e2>y</e2> ...` -> (plain text, e1 span, e2 span), as in SemEval-2010 Task 8 and KBP37."""
    text, spans, opened, last = [], {}, {}, 0
    length = 0
    for match in TAGGED.finditer(sentence):
        piece = sentence[last : match.start()]
        text.append(piece)
        length += len(piece)
        closing, name = match.group(1) == "/", match.group(2)
        if closing:
            if name not in opened:
                raise ValueError(f"{where}: </{name}> without <{name}>")
            spans[name] = (opened.pop(name), length)
        else:
            opened[name] = length
        last = match.end()
    text.append(sentence[last:])
    if set(spans) != {"e1", "e2"} or opened:
        raise ValueError(f"{where}: expected one <e1>...</e1> and one <e2>...</e2> in {sentence!r}")
    return "".join(text), spans["e1"], spans["e2"]


@DatasetReader.register("luke_relation_classification")
class LukeRelationClassificationReader(DatasetReader):
    """
    Relation classification (paper §4.2): the head and tail mentions become the special entities `[HEAD]`
    and `[TAIL]` (their embeddings start from `[MASK]`) over the mentions' subwords; the label is the
    relation between them.

    Formats, detected per file:
    - TACRED JSON: a list of `{"id", "relation", "token", "subj_start", "subj_end", "obj_start", "obj_end"}`
      with inclusive token spans; head = subject, tail = object.
    - SemEval-2010 Task 8 and KBP37: blocks of `ID<TAB>"sentence with <e1>..</e1> and <e2>..</e2>"`, a label
      line such as `Component-Whole(e2,e1)` or `per:alternate_names(e1,e2)`, a `Comment:` line and a blank
      line; head = e1, tail = e2, and the label keeps its direction.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `512`)
        Longer inputs keep a window around both mentions (counted and logged).
    use_entity_markers : `bool`, optional (default = `False`)
        Put `@` around the head and `#` around the tail in the text (for word-only baselines).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        use_entity_markers: bool = False,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self.tokenizer = load_fast_tokenizer(model_name)
        self.prefix, self.suffix = special_token_layout(self.tokenizer)
        self.room = max_seq_length - len(self.prefix) - len(self.suffix)
        self.use_entity_markers = use_entity_markers
        self.label_namespace = label_namespace
        self.truncated = 0

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.truncated = 0
        for example_id, text, head, tail, label in self.shard_iterable(self.read_examples(cached_path(file_path))):
            yield self.text_to_instance(text, head, tail, label, example_id)
        if self.truncated:
            logger.warning("%s: %d inputs longer than max_seq_length were cut to a window around both mentions", file_path, self.truncated)

    def read_examples(self, path: str) -> Iterator[Tuple[str, str, CharSpan, CharSpan, str]]:
        """(id, text, head span, tail span, label) for each example of a TACRED, SemEval or KBP37 file."""
        with open(path, encoding="utf-8") as f:
            content = f.read()
        if content.lstrip().startswith("["):
            for index, example in enumerate(json.loads(content)):
                where = f"{path}:{example.get('id', index)}"
                try:
                    tokens = example["token"]
                    head = (example["subj_start"], example["subj_end"])
                    tail = (example["obj_start"], example["obj_end"])
                    label = example["relation"]
                except KeyError as e:
                    raise ValueError(f"{where}: missing field {e}") from None
                starts = np.cumsum([0] + [len(t) + 1 for t in tokens])
                for s, e in (head, tail):
                    if not 0 <= s <= e < len(tokens):
                        raise ValueError(f"{where}: token span [{s}, {e}] is out of range for {len(tokens)} tokens")
                to_chars = lambda span: (int(starts[span[0]]), int(starts[span[1]] + len(tokens[span[1]])))  # noqa: E731
                yield where, " ".join(tokens), to_chars(head), to_chars(tail), label
            return
        lines = content.splitlines()
        number = 0
        while number < len(lines):
            line = lines[number].strip()
            number += 1
            if not line:
                continue
            where = f"{path}:{number}"
            example_id, _, quoted = line.partition("\t")
            if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
                raise ValueError(f'{where}: expected ID<TAB>"sentence", got {line!r}')
            text, head, tail = parse_tagged(quoted[1:-1], where)
            label = lines[number].strip() if number < len(lines) else ""
            if not label or label.startswith("Comment"):
                raise ValueError(f"{path}:{number + 1}: expected the relation label after example {example_id}")
            number += 1
            if number < len(lines) and lines[number].startswith("Comment"):
                number += 1
            yield f"{path}:{example_id}", text, head, tail, label

    def text_to_instance(  # type: ignore[override]
        self, text: str, head: CharSpan, tail: CharSpan, label: Optional[str] = None, example_id: str = "input"
    ) -> Instance:
        for name, (start, end) in (("head", head), ("tail", tail)):
            if not 0 <= start < end <= len(text):
                raise ValueError(f"{example_id}: {name} span [{start}, {end}] is out of range for a text of {len(text)} characters")
        if self.use_entity_markers:
            text, head, tail = self._insert_markers(text, head, tail)
        encoding = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = np.array(encoding["offset_mapping"]).reshape(-1, 2)
        ids = np.array(encoding["input_ids"])
        bounds: List[Tuple[int, int]] = []
        for name, (start, end) in (("head", head), ("tail", tail)):
            inside = np.nonzero((offsets[:, 0] < end) & (offsets[:, 1] > start))[0]
            if len(inside) == 0:
                raise ValueError(f"{example_id}: the {name} span covers no subword of {text!r}")
            bounds.append((int(inside[0]), int(inside[-1])))
        if len(ids) > self.room:  # a window that holds both mentions, centred on them
            low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
            if high - low + 1 > self.room:
                raise ValueError(f"{example_id}: head and tail are {high - low + 1} subwords apart, more than max_seq_length allows")
            self.truncated += 1
            begin = max(0, min(low - (self.room - (high - low + 1)) // 2, len(ids) - self.room))
            ids = ids[begin : begin + self.room]
            bounds = [(s - begin, e - begin) for s, e in bounds]
        shift = len(self.prefix)
        word_ids = self.prefix + ids.tolist() + self.suffix
        fields = {
            "word_ids": TensorField(torch.tensor(word_ids), padding_value=self.tokenizer.pad_token_id),
            "word_attention_mask": TensorField(torch.ones(len(word_ids), dtype=torch.bool), padding_value=False),
            "entity_ids": TensorField(torch.tensor([TASK_ENTITY_VOCAB["[HEAD]"], TASK_ENTITY_VOCAB["[TAIL]"]])),
            "entity_start_positions": TensorField(torch.tensor([s + shift for s, _ in bounds])),
            "entity_end_positions": TensorField(torch.tensor([e + shift for _, e in bounds])),
            "metadata": MetadataField({"id": example_id, "text": text, "head": list(head), "tail": list(tail)}),
        }
        if label is not None:
            fields["label"] = LabelField(label, label_namespace=self.label_namespace)
        return Instance(fields)

    @staticmethod
    def _insert_markers(text: str, head: CharSpan, tail: CharSpan) -> Tuple[str, CharSpan, CharSpan]:
        """Marks the mentions (`@ head @`, `# tail #`); the returned spans cover the marked mentions."""
        if head[0] < tail[1] and tail[0] < head[1]:
            raise ValueError("entity markers need head and tail mentions that do not overlap")
        out, spans, last = "", {}, 0
        for (start, end), (left, right), name in sorted(
            [(head, HEAD_MARKERS, "head"), (tail, TAIL_MARKERS, "tail")], key=lambda marked: marked[0][0]
        ):
            out += text[last:start]
            begin = len(out)
            out += f"{left} {text[start:end]} {right}"
            spans[name] = (begin, len(out))
            last = end
        return out + text[last:], spans["head"], spans["tail"]
