"""
Hub-schema copies of `../shared/data`, built with `datasets` itself, as the Hub's dataset cards and loading scripts
publish them (conll2003, squad/xquad, DFKI-SLT/tacred, sem_eval_2010_task_8, DFKI-SLT/kbp37, shunk031/JGLUE), and a
comparison of two readers' instances field by field.
"""

import json
import re
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

import numpy as np
import torch
from datasets import ClassLabel, Dataset, Features, Sequence, Value

# conll2003's ner_tags (IOB2), in the order of its ClassLabel.
CONLL_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
# sem_eval_2010_task_8's relation ClassLabel.
SEMEVAL_RELATIONS = [
    f"{name}({a},{b})"
    for name in (
        "Cause-Effect",
        "Component-Whole",
        "Content-Container",
        "Entity-Destination",
        "Entity-Origin",
        "Instrument-Agency",
        "Member-Collection",
        "Message-Topic",
        "Product-Producer",
    )
    for a, b in (("e1", "e2"), ("e2", "e1"))
] + ["Other"]
# DFKI-SLT/kbp37's relation ClassLabel.
KBP37_RELATIONS = ["no_relation"] + [
    f"{name}({a},{b})"
    for name in (
        "org:alternate_names",
        "org:city_of_headquarters",
        "org:country_of_headquarters",
        "org:founded",
        "org:founded_by",
        "org:members",
        "org:stateorprovince_of_headquarters",
        "org:subsidiaries",
        "org:top_members/employees",
        "per:alternate_names",
        "per:cities_of_residence",
        "per:countries_of_residence",
        "per:country_of_birth",
        "per:employee_of",
        "per:origin",
        "per:spouse",
        "per:stateorprovinces_of_residence",
        "per:title",
    )
    for a, b in (("e1", "e2"), ("e2", "e1"))
]
SQUAD_FEATURES = {
    "id": Value("string"),
    "title": Value("string"),
    "context": Value("string"),
    "question": Value("string"),
    "answers": Sequence({"text": Value("string"), "answer_start": Value("int32")}),
}


def iob2(tags: List[str]) -> List[str]:
    """IOB1 tags as IOB2: an entity's first tag is B-."""
    out = []
    for i, tag in enumerate(tags):
        if tag.startswith("I-") and (i == 0 or tags[i - 1][2:] != tag[2:] or tags[i - 1] == "O"):
            tag = "B-" + tag[2:]
        out.append(tag)
    return out


def conll_documents(path: Path, limit: Optional[int] = None) -> List[List[Dict[str, List[str]]]]:
    """The documents of a CoNLL-2003 file (the first `limit`), each a list of sentences {tokens, tags (IOB1)}."""
    documents: List[List[Dict[str, List[str]]]] = []
    for chunk in re.split(r"^-DOCSTART-.*$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]:
        sentences = []
        for block in chunk.strip("\n").split("\n\n"):
            lines = [line.split(" ") for line in block.split("\n") if line.strip()]
            if lines:
                sentences.append({"tokens": [c[0] for c in lines], "tags": [c[-1] for c in lines]})
        documents.append(sentences)
        if limit is not None and len(documents) == limit:
            break
    return documents


def conll_dataset(documents: List[List[Dict[str, List[str]]]], document_ids: bool = True) -> Dataset:
    """conll2003's schema (id, tokens, ner_tags as IOB2 ClassLabel integers), with a document_id column."""
    rows: Dict[str, list] = {"id": [], "tokens": [], "ner_tags": []}
    if document_ids:
        rows["document_id"] = []
    for number, document in enumerate(documents):
        for sentence in document:
            rows["id"].append(str(len(rows["id"])))
            rows["tokens"].append(sentence["tokens"])
            rows["ner_tags"].append([CONLL_TAGS.index(t) for t in iob2(sentence["tags"])])
            if document_ids:
                rows["document_id"].append(f"doc{number}")
    features = {
        "id": Value("string"),
        "tokens": Sequence(Value("string")),
        "ner_tags": Sequence(ClassLabel(names=CONLL_TAGS)),
    }
    if document_ids:
        features["document_id"] = Value("string")
    return Dataset.from_dict(rows, features=Features(features))


def squad_json(path: Path, articles: Optional[int] = None, paragraphs: Optional[int] = None) -> Dict[str, Any]:
    """A SQuAD JSON file's first `articles` articles, each with its first `paragraphs` paragraphs."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"][:articles]
    return {"version": "1.1", "data": [{**a, "paragraphs": a["paragraphs"][:paragraphs]} for a in data]}


def squad_dataset(
    path: Path, articles: Optional[int] = None, paragraphs: Optional[int] = None, title: bool = True
) -> Dataset:
    """The Hub's squad schema (xquad's has no title) of `squad_json(path, articles, paragraphs)`."""
    rows: Dict[str, list] = {name: [] for name in SQUAD_FEATURES}
    for article in squad_json(path, articles, paragraphs)["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                rows["id"].append(qa["id"])
                rows["title"].append(article["title"])
                rows["context"].append(paragraph["context"])
                rows["question"].append(qa["question"])
                rows["answers"].append(
                    {
                        "text": [a["text"] for a in qa["answers"]],
                        "answer_start": [a["answer_start"] for a in qa["answers"]],
                    }
                )
    features = dict(SQUAD_FEATURES)
    if not title:
        del rows["title"], features["title"]
    return Dataset.from_dict(rows, features=Features(features))


def tacred_dataset(path: Path) -> Dataset:
    """DFKI-SLT/tacred's schema: token spans with EXCLUSIVE ends, the relation a ClassLabel."""
    examples = json.loads(path.read_text(encoding="utf-8"))
    relations = sorted({e["relation"] for e in examples})
    rows = {
        "id": [e["id"] for e in examples],
        "token": [e["token"] for e in examples],
        "subj_start": [e["subj_start"] for e in examples],
        "subj_end": [e["subj_end"] + 1 for e in examples],
        "obj_start": [e["obj_start"] for e in examples],
        "obj_end": [e["obj_end"] + 1 for e in examples],
        "relation": [relations.index(e["relation"]) for e in examples],
    }
    features = {name: Value("int32") for name in ("subj_start", "subj_end", "obj_start", "obj_end")}
    features.update(id=Value("string"), token=Sequence(Value("string")), relation=ClassLabel(names=relations))
    return Dataset.from_dict(rows, features=Features({name: features[name] for name in rows}))


def tagged_relations(path: Path, limit: Optional[int] = None) -> List[Dict[str, str]]:
    """The (id, sentence with its markers, relation) of a SemEval-2010 Task 8 or KBP37 file."""
    examples = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        match = re.match(r'^(\d+)\t"(.*)"$', line.strip())
        if match:
            examples.append({"id": match.group(1), "sentence": match.group(2), "relation": lines[i + 1].strip()})
            if limit is not None and len(examples) == limit:
                break
    return examples


def tagged_dataset(examples: List[Dict[str, str]], relations: List[str], ids: bool = False) -> Dataset:
    """sem_eval_2010_task_8's schema (sentence, relation ClassLabel); with `ids`, DFKI-SLT/kbp37's (and id)."""
    rows: Dict[str, list] = {"sentence": [e["sentence"] for e in examples]}
    rows["relation"] = [relations.index(e["relation"]) for e in examples]
    features = {"sentence": Value("string"), "relation": ClassLabel(names=relations)}
    if ids:
        rows = {"id": [e["id"] for e in examples], **rows}
        features = {"id": Value("string"), **features}
    return Dataset.from_dict(rows, features=Features(features))


def json_lines_dataset(path: Path, limit: Optional[int] = None, features: Optional[Dict[str, Any]] = None) -> Dataset:
    """A JSON-lines file's first records as a dataset (JGLUE's files), with the given features."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:limit]
    rows = {key: [r[key] for r in records] for key in records[0]}
    if features and any(isinstance(f, ClassLabel) for f in features.values()):
        for key, feature in features.items():
            if isinstance(feature, ClassLabel):
                rows[key] = [feature.str2int(v) for v in rows[key]]
    return Dataset.from_dict(rows, features=Features(features) if features else None)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).shape == np.asarray(b).shape and bool((np.asarray(a) == np.asarray(b)).all())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _state(field: Any) -> Dict[str, Any]:
    """A field's attributes (allennlp's fields keep them in __slots__)."""
    names = [n for cls in type(field).__mro__ for n in getattr(cls, "__slots__", ())]
    state = {n: getattr(field, n) for n in names if hasattr(field, n)}
    state.update(getattr(field, "__dict__", {}))
    return state


def assert_same_instances(native: Iterable, other: Iterable) -> int:
    """Every field of every instance equal, but where each names its example (metadata `id`, a label's source: a file's
    line against a dataset's row); returns how many instances were compared."""
    native, other = list(native), list(other)
    assert len(native) == len(other) > 0
    for index, (a, b) in enumerate(zip(native, other)):
        assert a.fields.keys() == b.fields.keys(), index
        for name in a.fields:
            x, y = _state(a[name]), _state(b[name])
            if name == "metadata":
                x, y = dict(x["metadata"]), dict(y["metadata"])
                x.pop("id"), y.pop("id")
            x.pop("_source", None), y.pop("_source", None)
            assert type(a[name]) is type(b[name]) and _equal(x, y), (index, name, x, y)
    return len(native)
