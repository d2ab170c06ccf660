import logging
import re
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField

from luke_allennlp.data.fields import SourcedLabelField
from luke_allennlp.data.mention_task_reader import MentionTaskReader
from luke_allennlp.data.sources import LabelNames, cell
from luke_allennlp.resources.files import SeenIds, parse_json, read_text, require, split_lines
from luke_allennlp.resources.hf_datasets import Rows, first_json
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB
from luke_allennlp.resources.tokenization import token_id

logger = logging.getLogger(__name__)

CharSpan = Tuple[int, int]  # characters, end exclusive
TAGGED = re.compile(r"<(/?)(e[12])>")
# A relation label line of SemEval-2010 Task 8 (`Component-Whole(e2,e1)`, `Other`) or KBP37
# (`per:alternate_names(e1,e2)`, `org:top_members/employees(e2,e1)`, `no_relation`).
LABEL = re.compile(r"^(Other|no_relation|[A-Za-z][\w:/-]*\((e1,e2|e2,e1)\))$")
# Entity markers inserted around the mentions when `use_entity_markers` is on (a baseline option).
HEAD_MARKERS, TAIL_MARKERS = ("@", "@"), ("#", "#")


def parse_tagged(sentence: str, where: str) -> Tuple[str, CharSpan, CharSpan]:
    """
    `... <e1>x</e1> ... <e2>y</e2> ...` -> (plain text, e1 span, e2 span), as in SemEval-2010 Task 8 and KBP37.
    The spans leave out white space inside the tags (KBP37 writes `<e1> Thom Yorke </e1>`); a mention without
    text (`<e1> </e1>`) gives an empty span.
    """
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
    plain = "".join(text)
    return plain, _strip_span(plain, *spans["e1"]), _strip_span(plain, *spans["e2"])


def token_spans_to_text(
    tokens: Sequence[str], spans: Sequence[Tuple[int, int]], where: str
) -> Tuple[str, List[CharSpan]]:
    """Tokens joined by spaces, and token spans (end INCLUSIVE) as character spans of that text (end exclusive)."""
    if not all(isinstance(token, str) for token in tokens):
        raise ValueError(f"{where}: the tokens should be strings, not {list(tokens)[:5]!r}")
    starts = np.cumsum([0] + [len(t) + 1 for t in tokens])
    for s, e in spans:
        if not 0 <= s <= e < len(tokens):
            raise ValueError(f"{where}: token span [{s}, {e}] is out of range for {len(tokens)} tokens")
    return " ".join(tokens), [(int(starts[s]), int(starts[e] + len(tokens[e]))) for s, e in spans]


def _strip_span(text: str, start: int, end: int) -> CharSpan:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


@DatasetReader.register("luke_relation_classification")
class LukeRelationClassificationReader(MentionTaskReader):
    """
    Relation classification (paper §4.2): the head and tail mentions become the special entities `[HEAD]`
    and `[TAIL]` (their embeddings start from `[MASK]`) over the mentions' subwords; the label is the
    relation between them.

    Formats, detected per file:
    - TACRED JSON: a list of `{"id", "relation", "token", "subj_start", "subj_end", "obj_start", "obj_end"}`
      with inclusive token spans; head = subject, tail = object.
    - SemEval-2010 Task 8 and KBP37: blocks of `ID<TAB>"sentence with <e1>..</e1> and <e2>..</e2>"`, a label
      line such as `Component-Whole(e2,e1)`, `Other`, `per:alternate_names(e1,e2)` or `no_relation`, a
      `Comment:` line (SemEval only) and a blank line; head = e1, tail = e2, and the label keeps its direction.

    Datasets (`hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, Parquet, Arrow, CSV, TSV, JSON lines; see
    `luke_allennlp.data.sources`), one example per row, in any of the Hub's common layouts, recognised from the
    columns (logged):
    - token spans, TACRED-style: `token` (or `tokens`), `subj_start`, `subj_end`, `obj_start`, `obj_end` (or
      `head_start`, `head_end`, `tail_start`, `tail_end`), ends exclusive as in the Hub's `DFKI-SLT/tacred` and
      `kbp37_formatted` (`token_span_end: "inclusive"` for TACRED's own JSON exported as rows; an empty span is
      refused with that hint);
    - FewRel-style: `tokens` with `head` and `tail` records holding `indices` (lists of token positions; the first
      occurrence is the mention) or OpenNRE's `pos` (`[start, end)` tokens);
    - character offsets: `text` (or `sentence`) with `head_start`, `head_end`, `tail_start`, `tail_end` (characters,
      end exclusive);
    - marked text: `sentence` (or `text`) with `<e1>...</e1>` and `<e2>...</e2>`, as the Hub's SemEval-2010 Task 8
      and KBP37.
    The label is `relation` (or `label`): strings, or `ClassLabel` integers named by the feature (else by
    `label_names`; integers without names are refused); the example id `id` where there is one. A dataset without a
    label column gives unlabelled instances (a warning). Other column names: `columns`.

    Files are UTF-8 (a byte-order mark is ignored). Bad input raises an error naming the file and the line or
    example: undecodable bytes, malformed JSON, a missing field, a token span out of range, a malformed label
    line, a repeated example id. Examples that cannot be encoded are skipped, counted in `stats` and logged:
    a mention without text (KBP37 has some: `<e1> </e1>`; `skipped_empty_mentions`), and a head and tail
    farther apart than `max_seq_length` (`skipped_mentions_too_far_apart`). Longer inputs keep the window
    around both mentions (`truncated_inputs`). A file without examples is an error.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `512`)
        Longer inputs keep a window around both mentions (counted and logged).
    use_entity_markers : `bool`, optional (default = `False`)
        Put `@` around the head and `#` around the tail in the text (for word-only baselines).
    entity_marker_tokens : `List[str]`, optional (default = `None`)
        Two tokens of the tokenizer put before and after the head (the first) and the tail (the second) as
        tokens, the entities covering them: `["<ent>", "<ent2>"]` gives the input of transformers'
        `LukeTokenizer(task="entity_pair_classification")` (LUKE's released TACRED model).
    label_namespace : `str`, optional (default = `"labels"`)
    token_span_end : `str`, optional (default = `"exclusive"`)
        Datasets with token spans: whether `subj_end`/`obj_end` are `"exclusive"` (the Hub's) or `"inclusive"`
        (TACRED's own JSON, which is read as a file with inclusive ends whatever this says).
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role not under its default name: `tokens`, `text`, `head_start`, `head_end`,
        `tail_start`, `tail_end`, `head`, `tail`, `label`, `id` (e.g. `{"label": "rel"}`).
    label_names : `List[str]`, optional (default = `None`)
        Datasets whose labels are integers without `ClassLabel` names: the label of each integer, in order.
    """

    NAME = "luke_relation_classification"
    ROLES = {
        "tokens": ("token", "tokens"),
        "text": ("sentence", "text"),
        "head_start": ("subj_start", "head_start"),
        "head_end": ("subj_end", "head_end"),
        "tail_start": ("obj_start", "tail_start"),
        "tail_end": ("obj_end", "tail_end"),
        "head": ("head", "h"),
        "tail": ("tail", "t"),
        "label": ("relation", "label"),
        "id": ("id",),
    }
    SPANS = ("head_start", "head_end", "tail_start", "tail_end")

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        use_entity_markers: bool = False,
        entity_marker_tokens: Optional[List[str]] = None,
        label_namespace: str = "labels",
        token_span_end: str = "exclusive",
        **kwargs,
    ) -> None:
        super().__init__(model_name, max_seq_length, **kwargs)
        if token_span_end not in ("exclusive", "inclusive"):
            raise ValueError(f"token_span_end must be 'exclusive' or 'inclusive', not {token_span_end!r}")
        self.token_span_end = token_span_end
        self.use_entity_markers = use_entity_markers
        self.marker_ids = None
        if entity_marker_tokens is not None:
            if len(entity_marker_tokens) != 2 or use_entity_markers:
                raise ValueError("entity_marker_tokens takes two tokens (head, tail), and not with use_entity_markers")
            self.marker_ids = [token_id(self.tokenizer, t, model_name) for t in entity_marker_tokens]
        self.label_namespace = label_namespace

    def read_examples(
        self, path: str, name: Optional[str] = None
    ) -> Iterator[Tuple[str, str, CharSpan, CharSpan, str]]:
        """(id, text, head span, tail span, label) for each example of a TACRED, SemEval or KBP37 file."""
        name = name or path
        content = read_text(path, name)
        if content.lstrip().startswith("["):
            yield from self._read_tacred(parse_json(content, name), name)
        else:
            yield from self._read_tagged(content, name)

    def native_file(self, path: str) -> bool:
        """TACRED's JSON (an array) and the SemEval/KBP37 text; JSON lines, CSV, ... are datasets."""
        return first_json(path)[0] in ("array", "text") and not path.lower().endswith((".csv", ".tsv"))

    @staticmethod
    def _read_tacred(examples: list, name: str) -> Iterator[Tuple[str, str, CharSpan, CharSpan, str]]:
        seen = SeenIds()
        for index, example in enumerate(examples):
            example_id = str(example.get("id", index)) if isinstance(example, dict) else str(index)
            where = f"{name}:{example_id}"
            seen.check(example_id, where, f"example {index}")
            tokens = require(example, "token", list, where)
            head = (require(example, "subj_start", int, where), require(example, "subj_end", int, where))
            tail = (require(example, "obj_start", int, where), require(example, "obj_end", int, where))
            label = require(example, "relation", str, where)
            text, (head, tail) = token_spans_to_text(tokens, (head, tail), where)
            yield where, text, head, tail, label

    def dataset_examples(self, rows: Rows) -> Iterator[Tuple[str, str, CharSpan, CharSpan, Optional[str]]]:
        """(id, text, head span, tail span, label or None) for each row, in the layout its columns say."""
        columns = {role: self.columns.find(rows, role) for role in self.ROLES}
        spans = [columns[role] for role in self.SPANS]
        if columns["tokens"] is not None and all(spans):
            kind, layout = "token spans", f"token spans ({', '.join(spans)}; ends {self.token_span_end})"
        elif columns["tokens"] is not None and columns["head"] and columns["tail"]:
            kind, layout = "positions", f"token positions of {columns['head']} and {columns['tail']} (FewRel, OpenNRE)"
        elif columns["text"] is not None and all(spans):
            kind, layout = "offsets", f"character offsets ({', '.join(spans)})"
        elif columns["text"] is not None:
            kind, layout = "markers", f"<e1>/<e2> markers in {columns['text']!r}"
        else:
            raise rows.missing(
                "the text or tokens",
                ("token", "tokens", "sentence", "text"),
                'columns, e.g. columns: {"text": "COLUMN"}',
            )
        label_column = columns["label"]
        if label_column is None:
            logger.warning("%s: no label column (relation, label): the instances have no labels", rows.name)
        labels = LabelNames(rows, label_column, self.label_names) if label_column else None
        logger.info("%s: relation examples as %s, label %s", rows.name, layout, label_column)
        seen = SeenIds()
        for index, row in rows:
            where = rows.where(index)
            if columns["id"] is not None:
                example_id = f"{rows.name}:{row[columns['id']]}"
                seen.check(example_id, f"{where}: example {row[columns['id']]}", f"row {index}")
            else:
                example_id = where
            label = labels(row[label_column], where) if labels is not None else None
            if kind == "markers":
                text, head, tail = parse_tagged(cell(row, columns["text"], str, where), where)
            elif kind == "offsets":
                text = cell(row, columns["text"], str, where)
                head, tail = ((cell(row, spans[i], int, where), cell(row, spans[i + 1], int, where)) for i in (0, 2))
            else:
                tokens = cell(row, columns["tokens"], list, where)
                if kind == "token spans":
                    pairs = [
                        self._inclusive(
                            cell(row, spans[i], int, where), cell(row, spans[i + 1], int, where), name, where
                        )
                        for i, name in ((0, "head"), (2, "tail"))
                    ]
                else:
                    pairs = [_positions(row[columns[role]], role, where) for role in ("head", "tail")]
                text, (head, tail) = token_spans_to_text(tokens, pairs, where)
            yield example_id, text, head, tail, label

    def _inclusive(self, start: int, end: int, name: str, where: str) -> Tuple[int, int]:
        """A token span of the dataset as (first, last) token."""
        if self.token_span_end == "inclusive":
            return start, end
        if end <= start:
            raise ValueError(
                f"{where}: the {name} token span [{start}, {end}) is empty with exclusive ends (the Hub's TACRED "
                "layout); if the dataset's ends are inclusive (TACRED's own JSON), set the reader's token_span_end "
                "to 'inclusive'"
            )
        return start, end - 1

    @staticmethod
    def _read_tagged(content: str, name: str) -> Iterator[Tuple[str, str, CharSpan, CharSpan, str]]:
        """SemEval-2010 Task 8 and KBP37 blocks."""
        lines = split_lines(content)
        seen = SeenIds()
        number = 0
        while number < len(lines):
            line = lines[number].strip()
            number += 1
            if not line:
                continue
            where = f"{name}:{number}"
            example_id, _, quoted = line.partition("\t")
            if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
                raise ValueError(f'{where}: expected ID<TAB>"sentence", got {line!r}')
            seen.check(example_id, f"{where}: example {example_id}", f"line {number}")
            text, head, tail = parse_tagged(quoted[1:-1], where)
            label = lines[number].strip() if number < len(lines) else ""
            if not label or label.startswith("Comment"):
                raise ValueError(f"{name}:{number + 1}: expected the relation label after example {example_id}")
            if not LABEL.match(label):
                raise ValueError(
                    f"{name}:{number + 1}: {label!r} is not a relation label (Relation(e1,e2), Relation(e2,e1), "
                    f"Other or no_relation) after example {example_id}"
                )
            number += 1
            if number < len(lines) and lines[number].startswith("Comment"):
                number += 1
            yield f"{name}, example {example_id}", text, head, tail, label  # (`FILE:7` would read as a line number)

    def text_to_instance(  # type: ignore[override]
        self, text: str, head: CharSpan, tail: CharSpan, label: Optional[str] = None, example_id: str = "input"
    ) -> Instance:
        """
        One example: `head` and `tail` are character spans (end exclusive) of `text`. A mention without text or
        a head and tail too far apart for `max_seq_length` raise `UnusableExample` (a `ValueError`).
        """
        names = ("head", "tail")
        if self.use_entity_markers:
            self.inputs.check_spans(text, (head, tail), names, example_id)
            text, head, tail = self._insert_markers(text, head, tail)
        entity_ids = [TASK_ENTITY_VOCAB["[HEAD]"], TASK_ENTITY_VOCAB["[TAIL]"]]
        fields = self.inputs.encode(text, [head, tail], entity_ids, example_id, names, markers=self.marker_ids)
        fields["metadata"] = MetadataField({"id": example_id, "text": text, "head": list(head), "tail": list(tail)})
        if label is not None:
            fields["label"] = SourcedLabelField(label, self.label_namespace, source=example_id)
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


def _positions(value: Any, role: str, where: str) -> Tuple[int, int]:
    """(first, last) token of a FewRel mention (`{"indices": [[i, j, ...], ...]}`: its first occurrence) or an
    OpenNRE one (`{"pos": [start, end]}`, end exclusive)."""
    if isinstance(value, dict) and isinstance(value.get("indices"), list) and value["indices"]:
        positions = value["indices"][0]
        if isinstance(positions, list) and positions and all(isinstance(i, int) for i in positions):
            return min(positions), max(positions)
    if isinstance(value, dict) and isinstance(value.get("pos"), list) and len(value["pos"]) == 2:
        start, end = value["pos"]
        if isinstance(start, int) and isinstance(end, int) and start < end:
            return start, end - 1
    raise ValueError(
        f"{where}: the {role} should be a record with 'indices' (FewRel: lists of token positions) or 'pos' "
        f"(OpenNRE: [start, end)), not {str(value)[:80]!r}"
    )
