"""
Every task reader reads Hugging Face datasets (the Hub, `save_to_disk`, Parquet, Arrow, CSV, TSV, JSON lines) into the
instances its own files give: Hub-schema copies of `../shared/data` built with `datasets` itself
(`tests/data_readers/hub_layouts.py`) against the native files, every field compared.
"""

import json
import logging
import os
import subprocess

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from datasets import ClassLabel, Dataset, DatasetDict, Features, Sequence, Value

from data_readers.luke_conll2003 import LukeConll2003Reader
from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader
from data_readers.luke_multiple_choice import LukeMultipleChoiceReader
from data_readers.luke_open_entity import LukeOpenEntityReader
from data_readers.luke_record import LukeRecordReader
from data_readers.luke_relation_classification import LukeRelationClassificationReader
from data_readers.luke_sentence_classification import LukeSentenceClassificationReader
from data_readers.luke_squad import LukeSquadReader
from luke_allennlp.resources.entity_disambiguation import read_benchmark
from tests.conftest import ALLENNLP, REPO_ROOT
from tests.data_readers.hub_layouts import (
    CONLL_TAGS,
    KBP37_RELATIONS,
    SEMEVAL_RELATIONS,
    assert_same_instances,
    conll_dataset,
    conll_documents,
    json_lines_dataset,
    squad_dataset,
    squad_json,
    tacred_dataset,
    tagged_dataset,
    tagged_relations,
)
from tests.data_readers.sharding import read_in_shards


def conll_file(documents, path):
    """The documents as a CoNLL-2003 file (word POS chunk NER)."""
    lines = []
    for document in documents:
        lines += ["-DOCSTART- -X- O O", ""]
        for sentence in document:
            lines += [f"{w} NN O {t}" for w, t in zip(sentence["tokens"], sentence["tags"])] + [""]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_conll2003_in_the_hub_layout_reads_as_the_files(tiny_luke_dir, shared_data, tmp_path, caplog):
    """The three files' first documents, as conll2003 on the Hub has them (IOB2 ClassLabel tags) plus a document id
    column: Parquet, save_to_disk and JSON lines give the native instances, every field."""
    caplog.set_level(logging.INFO)
    reader = LukeConll2003Reader(str(tiny_luke_dir))
    rows = LukeConll2003Reader(str(tiny_luke_dir), documents="column")
    compared = 0
    for name, kind in (("eng.train", "parquet"), ("eng.testa", "disk"), ("eng.testb", "jsonl")):
        documents = conll_documents(shared_data / "conll2003" / name, limit=4)
        native = list(reader.read(conll_file(documents, tmp_path / name)))
        dataset = conll_dataset(documents)
        path = tmp_path / f"{name}.{kind}"
        if kind == "parquet":
            dataset.to_parquet(str(path))
        elif kind == "disk":
            dataset.save_to_disk(str(path))
        else:
            dataset.to_json(str(path))  # (ClassLabel names are lost: they are given as label_names)
        other = (
            rows
            if kind != "jsonl"
            else LukeConll2003Reader(str(tiny_luke_dir), documents="column", label_names=CONLL_TAGS)
        )
        compared += assert_same_instances(native, other.read(str(path)))
        assert other.stats["documents"] == reader.stats["documents"] == 4
        assert (
            f"{path}: tags IOB2 (from the tags)" in caplog.text and f"{name}: tags IOB1 (from the tags)" in caplog.text
        )
    assert compared > 100
    # The Hub's conll2003 as published: no document boundaries, so each sentence is its own document by default.
    hub = conll_dataset(conll_documents(shared_data / "conll2003" / "eng.testa", limit=2), document_ids=False)
    hub.to_parquet(str(tmp_path / "hub.parquet"))
    instances = list(reader.read(str(tmp_path / "hub.parquet")))
    assert reader.stats["documents"] == reader.stats["sentences"] == len(instances) == len(hub)
    assert (
        "hub.parquet: documents: each sentence its own (no context from other sentences) (the default for datasets)"
        in caplog.text
    )


def test_ner_dataset_documents_tags_and_errors(tiny_luke_dir, tmp_path, caplog):
    features = Features({"tokens": Sequence(Value("string")), "tags": Sequence(Value("string"))})
    data = {
        "tokens": [["-DOCSTART-"], ["Paris", "is", "big"], [], ["-DOCSTART-"], ["New", "York", "too"]],
        "tags": [["O"], ["S-LOC", "O", "O"], [], ["O"], ["B-LOC", "E-LOC", "O"]],
    }
    Dataset.from_dict(data, features=features).to_parquet(str(tmp_path / "bioes.parquet"))
    reader = LukeConll2003Reader(str(tiny_luke_dir), documents="consecutive")
    with caplog.at_level(logging.INFO):
        instances = list(reader.read(str(tmp_path / "bioes.parquet")))
    assert [i["metadata"]["gold_spans"] for i in instances] == [{(0, 1): "LOC"}, {(0, 2): "LOC"}]
    assert reader.stats["docstart_examples"] == 2 and reader.stats["empty_examples"] == 1
    assert reader.stats["documents"] == 2 and reader.tag_scheme.scheme() == "bioes"
    assert "tags BIOES (from the tags), 2 entities, none invalid" in caplog.text
    assert "'docstart_examples': 2, 'empty_examples': 1" in caplog.text
    # Declared IOB2 on IOB1 data: the entities starting with I- are invalid sequences, counted with the first's place.
    Dataset.from_dict({"tokens": [["a", "b"], ["c"]], "ner_tags": [["I-PER", "I-PER"], ["B-ORG"]]}).to_json(
        str(tmp_path / "iob1.jsonl")
    )
    reader = LukeConll2003Reader(str(tiny_luke_dir), encoding="iob2")
    with caplog.at_level(logging.WARNING):
        list(reader.read(str(tmp_path / "iob1.jsonl")))
    assert reader.stats["invalid_tag_sequences"] == 1
    assert "tags IOB2 (declared): 1 invalid tag sequences (entities starting inside: 1, first at " in caplog.text
    errors = [
        (
            {"tokens": [["a"]], "labels": [["O"]]},
            {},
            "no column for 'tags' (looked for ner_tags, tags; its columns: tokens, labels)",
        ),
        ({"tokens": [["a"]], "ner_tags": [[0]]}, {}, "row 0: column 'ner_tags' holds the integer 0 but no label names"),
        ({"tokens": [["a"]], "ner_tags": [["S-PER"]]}, {"encoding": "iob1"}, "tag S-PER is not IOB1"),
        ({"tokens": [["a"]], "ner_tags": [["PER"]]}, {}, "row 0: 'PER' is not a tag"),
        ({"tokens": [["a", "b"]], "ner_tags": [["O"]]}, {}, "row 0: 2 words but 1 tags"),
        (
            {"tokens": [["a"], ["b"], ["c"]], "ner_tags": [["O"]] * 3, "doc": ["x", "y", "x"]},
            {"documents": "column", "columns": {"document": "doc"}},
            "row 2: document 'x' of column 'doc' continues after other documents (it began at",
        ),
    ]
    for number, (rows, options, message) in enumerate(errors):
        path = tmp_path / f"bad{number}.jsonl"
        Dataset.from_dict(rows).to_json(str(path))
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            list(LukeConll2003Reader(str(tiny_luke_dir), **options).read(str(path)))
    with pytest.raises(
        ValueError, match=r"columns: luke_conll2003 has no role 'tag' \(its roles: tokens, tags, document\)"
    ):
        LukeConll2003Reader(str(tiny_luke_dir), columns={"tag": "x"})


def test_plain_column_files(tiny_luke_dir, tmp_path, caplog):
    """WNUT-17's layout (word<TAB>tag, lower-case types with hyphens, no -DOCSTART-), a word holding a space under
    `column_separator`, the tag in another column than the last, BIOES tags."""
    (tmp_path / "wnut.tsv").write_text(
        "Stranger\tB-creative-work\nThings\tI-creative-work\nrocks\tO\n\n@me\tO\nhi\tO\n"
    )
    reader = LukeConll2003Reader(str(tiny_luke_dir))
    with caplog.at_level(logging.INFO):
        instances = list(reader.read(str(tmp_path / "wnut.tsv")))
    assert instances[0]["metadata"]["gold_spans"] == {(0, 2): "creative-work"} and reader.stats["documents"] == 1
    assert (
        "wnut.tsv: no -DOCSTART-: read as one document (each sentence takes context from its neighbours); set the reader's documents to 'example'"
        in caplog.text
    )
    reader = LukeConll2003Reader(str(tiny_luke_dir), documents="example")
    instances = list(reader.read(str(tmp_path / "wnut.tsv")))
    assert reader.stats["documents"] == 2 and len(instances) == 2
    # Numbered lines, the word second and the tag third, a word with a space, tab-separated.
    (tmp_path / "numbered.txt").write_text("1\tNew York\tS-LOC\tx\n2\tis\tO\tx\n\n1\tok\tO\tx\n")
    reader = LukeConll2003Reader(str(tiny_luke_dir), word_column=1, tag_column=2, column_separator="\t")
    instances = list(reader.read(str(tmp_path / "numbered.txt")))
    assert instances[0]["metadata"]["words"] == ["New York", "is"]
    assert instances[0]["metadata"]["gold_spans"] == {(0, 1): "LOC"} and reader.tag_scheme.scheme() == "bioes"
    (tmp_path / "short.txt").write_text("1\tword\n")
    with pytest.raises(
        ValueError, match=r"short.txt:1: expected the word in column 1 and an O/B-X/I-X tag in column 2"
    ):
        list(reader.read(str(tmp_path / "short.txt")))


def test_squad_xquad_and_jsquad_in_the_hub_schema(tiny_luke_dir, shared_data, tmp_path):
    reader = LukeSquadReader(str(tiny_luke_dir), max_seq_length=128, doc_stride=64)
    dev = shared_data / "squad1.1" / "dev-v1.1.json"
    (tmp_path / "dev.json").write_text(json.dumps(squad_json(dev, articles=2, paragraphs=4)))
    squad_dataset(dev, articles=2, paragraphs=4).to_parquet(str(tmp_path / "dev.parquet"))
    assert (
        assert_same_instances(reader.read(str(tmp_path / "dev.json")), reader.read(str(tmp_path / "dev.parquet"))) > 50
    )
    # SQuAD JSON named .json stays SQuAD JSON; its Hub rows as JSON lines named .json are rows.
    squad_dataset(dev, articles=1, paragraphs=1).to_json(str(tmp_path / "rows.json"))
    assert len(list(reader.read(str(tmp_path / "rows.json")))) == 30
    xquad = shared_data / "xquad" / "xquad.de.json"
    squad_dataset(xquad).save_to_disk(str(tmp_path / "xquad.de"))
    assert assert_same_instances(reader.read(str(xquad)), reader.read(str(tmp_path / "xquad.de"))) == 177
    # xquad as published has no title: the passages have no page, all else is the same.
    squad_dataset(xquad, title=False).to_parquet(str(tmp_path / "untitled.parquet"))
    untitled = list(reader.read(str(tmp_path / "untitled.parquet")))
    assert len(untitled) == 177 and untitled[0]["metadata"]["title"] is None
    jsquad = shared_data / "jglue" / "jsquad-v1.3" / "valid-v1.3.json"
    squad_dataset(jsquad, articles=2, paragraphs=3).to_json(str(tmp_path / "jsquad.jsonl"))
    (tmp_path / "jsquad.json").write_text(json.dumps(squad_json(jsquad, articles=2, paragraphs=3)))
    assert assert_same_instances(
        reader.read(str(tmp_path / "jsquad.json")), reader.read(str(tmp_path / "jsquad.jsonl"))
    )
    bad = squad_dataset(dev, articles=1, paragraphs=1).select(range(2)).to_dict()
    bad["answers"][1] = {"text": ["Denver"], "answer_start": [0]}
    Dataset.from_dict(bad).to_json(str(tmp_path / "bad.jsonl"))
    with pytest.raises(
        ValueError, match=r"bad.jsonl: question \w+, answer 0: the text 'Denver' is not at answer_start 0"
    ):
        list(reader.read(str(tmp_path / "bad.jsonl")))


def test_relation_layouts(tiny_luke_dir, shared_data, tmp_path, caplog):
    reader = LukeRelationClassificationReader(str(tiny_luke_dir))
    tacred = shared_data / "tacred_sample" / "train.json"
    tacred_dataset(tacred).save_to_disk(str(tmp_path / "tacred"))
    assert assert_same_instances(reader.read(str(tacred)), reader.read(str(tmp_path / "tacred"))) == 20
    semeval = tagged_relations(shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT", limit=200)
    (tmp_path / "semeval.txt").write_text(
        "".join(f'{e["id"]}\t"{e["sentence"]}"\n{e["relation"]}\nComment:\n\n' for e in semeval)
    )
    tagged_dataset(semeval, SEMEVAL_RELATIONS).to_parquet(str(tmp_path / "semeval.parquet"))
    assert (
        assert_same_instances(
            reader.read(str(tmp_path / "semeval.txt")), reader.read(str(tmp_path / "semeval.parquet"))
        )
        == 200
    )
    kbp37 = shared_data / "relx" / "RELX_en.txt"  # (RELX's English part is KBP37's test set, in KBP37's format)
    tagged_dataset(tagged_relations(kbp37), KBP37_RELATIONS, ids=True).to_csv(str(tmp_path / "kbp37.csv"), index=False)
    native = list(reader.read(str(kbp37)))
    native_stats = dict(reader.stats)
    with pytest.raises(
        ValueError, match=r"kbp37.csv, row 0: column 'relation' holds the integer \d+ but no label names"
    ):
        list(reader.read(str(tmp_path / "kbp37.csv")))
    named = LukeRelationClassificationReader(str(tiny_luke_dir), label_names=KBP37_RELATIONS)
    assert assert_same_instances(native, named.read(str(tmp_path / "kbp37.csv"))) == len(native)
    assert dict(named.stats) == native_stats and native_stats["skipped_empty_mentions"] == 1  # (the same skipped)
    # TACRED's own inclusive ends as rows: an empty span says so.
    rows = json.loads(tacred.read_text())
    Dataset.from_list(rows).to_json(str(tmp_path / "inclusive.jsonl"))
    with pytest.raises(
        ValueError, match="is empty with exclusive ends .* set the reader's token_span_end to 'inclusive'"
    ):
        list(reader.read(str(tmp_path / "inclusive.jsonl")))
    inclusive = LukeRelationClassificationReader(str(tiny_luke_dir), token_span_end="inclusive")
    assert assert_same_instances(reader.read(str(tacred)), inclusive.read(str(tmp_path / "inclusive.jsonl"))) == 20
    # Character offsets in a CSV, FewRel's indices: the same text and spans as the markers give.
    first = next(iter(reader.read(str(tmp_path / "semeval.txt"))))
    text, (hs, he), (ts, te) = first["metadata"]["text"], first["metadata"]["head"], first["metadata"]["tail"]
    label = semeval[0]["relation"]
    Dataset.from_dict(
        {"text": [text], "head_start": [hs], "head_end": [he], "tail_start": [ts], "tail_end": [te], "label": [label]}
    ).to_csv(str(tmp_path / "offsets.csv"), index=False)
    assert assert_same_instances([first], reader.read(str(tmp_path / "offsets.csv")))
    tokens = ["The", "cat", "sat", "on", "the", "mat"]
    fewrel = {
        "tokens": [tokens],
        "head": [{"text": "cat", "indices": [[1]]}],
        "tail": [{"text": "the mat", "indices": [[4, 5]]}],
        "relation": ["P1"],
    }
    Dataset.from_dict(fewrel).to_parquet(str(tmp_path / "fewrel.parquet"))
    (instance,) = reader.read(str(tmp_path / "fewrel.parquet"))
    assert instance["metadata"]["head"] == [4, 7] and instance["metadata"]["tail"] == [15, 22]
    assert instance["label"].label == "P1"


def test_open_entity_and_jglue_in_dataset_layouts(tiny_luke_dir, shared_data, tmp_path):
    typing = LukeOpenEntityReader(str(tiny_luke_dir))
    examples = json.loads((shared_data / "open_entity" / "dev.json").read_text())[:100]
    (tmp_path / "dev.json").write_text(json.dumps(examples))
    Dataset.from_list([{k: e[k] for k in ("sent", "start", "end", "labels")} for e in examples]).to_json(
        str(tmp_path / "dev.jsonl")
    )
    assert (
        assert_same_instances(typing.read(str(tmp_path / "dev.json")), typing.read(str(tmp_path / "dev.jsonl"))) == 100
    )
    jglue = shared_data / "jglue"
    pairs = LukeSentenceClassificationReader(str(tiny_luke_dir), id_field="sentence_pair_id")
    labels = ClassLabel(names=["entailment", "contradiction", "neutral"])
    features = {
        "sentence_pair_id": Value("string"),
        "yjcaptions_id": Value("string"),
        "sentence1": Value("string"),
        "sentence2": Value("string"),
        "label": labels,
    }
    jnli = jglue / "jnli-v1.3" / "valid-v1.3.json"
    (tmp_path / "jnli.jsonl").write_text("\n".join(jnli.read_text().splitlines()[:200]) + "\n")
    json_lines_dataset(jnli, 200, features).to_parquet(str(tmp_path / "jnli.parquet"))
    assert (
        assert_same_instances(pairs.read(str(tmp_path / "jnli.jsonl")), pairs.read(str(tmp_path / "jnli.parquet")))
        == 200
    )
    scores = LukeSentenceClassificationReader(str(tiny_luke_dir), regression=True, id_field="sentence_pair_id")
    jsts = jglue / "jsts-v1.3" / "valid-v1.3.json"
    (tmp_path / "jsts.jsonl").write_text("\n".join(jsts.read_text().splitlines()[:200]) + "\n")
    json_lines_dataset(jsts, 200).to_csv(str(tmp_path / "jsts.tsv"), sep="\t", index=False)
    assert (
        assert_same_instances(scores.read(str(tmp_path / "jsts.jsonl")), scores.read(str(tmp_path / "jsts.tsv"))) == 200
    )
    choices = LukeMultipleChoiceReader(str(tiny_luke_dir), id_field="q_id")
    jcqa = jglue / "jcommonsenseqa-v1.3" / "valid-v1.3.json"
    (tmp_path / "jcqa.jsonl").write_text("\n".join(jcqa.read_text().splitlines()[:200]) + "\n")
    json_lines_dataset(jcqa, 200).save_to_disk(str(tmp_path / "jcqa"))
    assert (
        assert_same_instances(choices.read(str(tmp_path / "jcqa.jsonl")), choices.read(str(tmp_path / "jcqa"))) == 200
    )
    # Integer labels need names; a ClassLabel's -1 (GLUE's test splits) is no label.
    Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "label": [0, 1]}).to_csv(
        str(tmp_path / "ints.csv"), index=False
    )
    plain = LukeSentenceClassificationReader(str(tiny_luke_dir))
    with pytest.raises(ValueError, match=r"ints.csv, row 0: column 'label' holds the integer 0 but no label names"):
        list(plain.read(str(tmp_path / "ints.csv")))
    named = LukeSentenceClassificationReader(str(tiny_luke_dir), label_names=["no", "yes"])
    assert [i["label"].label for i in named.read(str(tmp_path / "ints.csv"))] == ["no", "yes"]
    unlabelled = Dataset.from_dict(
        {"sentence1": ["a"], "sentence2": ["b"], "label": [-1]},
        features=Features({"sentence1": Value("string"), "sentence2": Value("string"), "label": labels}),
    )
    unlabelled.to_parquet(str(tmp_path / "test.parquet"))
    assert "label" not in next(iter(plain.read(str(tmp_path / "test.parquet")))).fields
    # CommonsenseQA's layout: choices as {"label", "text"}, the answer a letter.
    Dataset.from_dict(
        {"question": ["Q?"], "choices": [{"label": ["A", "B"], "text": ["x", "y"]}], "answerKey": ["B"]}
    ).to_json(str(tmp_path / "csqa.jsonl"))
    lettered = LukeMultipleChoiceReader(str(tiny_luke_dir), choices_field="choices", label_field="answerKey")
    (instance,) = lettered.read(str(tmp_path / "csqa.jsonl"))
    assert instance["metadata"]["choices"] == ["x", "y"] and instance["metadata"]["label"] == 1


def test_record_and_entity_disambiguation_datasets(tiny_luke_dir, record_sample, tmp_path):
    """ReCoRD in SuperGLUE's Hub schema (entity_spans with exclusive ends) reads as the official JSON."""
    reader = LukeRecordReader(str(tiny_luke_dir), max_seq_length=128)
    data = json.loads(record_sample.read_text())["data"]
    rows = {"passage": [], "query": [], "entity_spans": [], "answers": [], "idx": []}
    for p, entry in enumerate(data):
        text = entry["passage"]["text"]
        spans = sorted((e["start"], e["end"] + 1) for e in entry["passage"]["entities"])
        for q, qa in enumerate(entry["qas"]):
            rows["passage"].append(text)
            rows["query"].append(qa["query"])
            rows["entity_spans"].append(
                {"text": [text[s:e] for s, e in spans], "start": [s for s, _ in spans], "end": [e for _, e in spans]}
            )
            rows["answers"].append([a["text"] for a in qa["answers"]])
            rows["idx"].append({"passage": p, "query": q})
    Dataset.from_dict(rows).to_parquet(str(tmp_path / "record.parquet"))
    native, other = list(reader.read(str(record_sample))), list(reader.read(str(tmp_path / "record.parquet")))
    assert [i["metadata"]["candidates"] for i in native] == [i["metadata"]["candidates"] for i in other]
    assert all(((a["entity_ids"].tensor == b["entity_ids"].tensor).all() for a, b in zip(native, other)))
    assert [i["metadata"]["id"] for i in other] == ["0-0", "1-0"]
    # The older schema, the entities' texts only: their occurrences in the passage are the mentions (counted).
    rows["entities"] = [sorted(set(spans["text"])) for spans in rows.pop("entity_spans")]
    Dataset.from_dict(rows).to_json(str(tmp_path / "texts.jsonl"))
    by_text = list(reader.read(str(tmp_path / "texts.jsonl")))
    assert reader.stats["mentions_found_by_text"] >= sum(len(e["passage"]["entities"]) for e in data)
    assert [set(i["metadata"]["candidates"]) for i in by_text] == [set(i["metadata"]["candidates"]) for i in native]


def test_streamed_dataset_is_read_once_across_processes_and_workers(tiny_luke_dir, shared_data, tmp_path, monkeypatch):
    """A stream (a local Parquet file is always read as one) read by 2 distributed processes x 2 data-loader
    workers: every sentence exactly once."""
    documents = conll_documents(shared_data / "conll2003" / "eng.testb", limit=3)
    conll_dataset(documents).to_parquet(str(tmp_path / "testb.parquet"))
    shards = read_in_shards(
        monkeypatch, lambda: LukeConll2003Reader(str(tiny_luke_dir)), str(tmp_path / "testb.parquet")
    )
    ids = [i["metadata"]["id"] for shard in shards for i in shard]
    total = sum(len(d) for d in documents)
    assert len(ids) == len(set(ids)) == total and all(shards)
    # By documents (a document id column): whole documents per shard, each once.
    shards = read_in_shards(
        monkeypatch,
        lambda: LukeConll2003Reader(str(tiny_luke_dir), documents="column"),
        str(tmp_path / "testb.parquet"),
    )
    ids = [i["metadata"]["id"] for shard in shards for i in shard]
    assert len(ids) == len(set(ids)) == total and sum(1 for s in shards if s) == 3


def test_the_configs_read_hub_layouts_unchanged(tiny_luke_dir, shared_data, tmp_path, monkeypatch):
    """configs/ner/conll2003.jsonnet, reading_comprehension/squad.jsonnet and relation_classification/semeval.jsonnet
    build readers that read Hub-schema data as given (the tag scheme from the tags, the layout from the columns)."""
    conll_dataset(conll_documents(shared_data / "conll2003" / "eng.testa", limit=1), document_ids=False).to_parquet(
        str(tmp_path / "train.parquet")
    )
    squad_dataset(shared_data / "squad1.1" / "dev-v1.1.json", articles=1, paragraphs=2).save_to_disk(
        str(tmp_path / "squad")
    )
    semeval = tagged_relations(shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT", limit=5)
    Dataset.from_list([{"sentence": e["sentence"], "relation": e["relation"]} for e in semeval]).to_json(
        str(tmp_path / "semeval.jsonl")
    )
    monkeypatch.setenv("MODEL_NAME", str(tiny_luke_dir))
    monkeypatch.setenv("MENTION_DICTIONARY", "")
    for config, data in (
        ("ner/conll2003.jsonnet", "train.parquet"),
        ("reading_comprehension/squad.jsonnet", "squad"),
        ("relation_classification/semeval.jsonnet", "semeval.jsonl"),
    ):
        monkeypatch.setenv("TRAIN_DATA_PATH", str(tmp_path / data))
        monkeypatch.setenv("VALIDATION_DATA_PATH", str(tmp_path / data))
        params = Params.from_file(str(REPO_ROOT / "configs" / config))
        reader_params = params["dataset_reader"].as_dict()
        reader_params.pop("mention_dictionary", None)
        reader = DatasetReader.from_params(Params(reader_params))
        instances = list(reader.read(params["train_data_path"]))
        assert len(instances) == {"train.parquet": 16, "squad": 55, "semeval.jsonl": 5}[data]
        if data == "train.parquet":
            assert reader.tag_scheme.scheme() == "iob2" and sum(len(i["metadata"]["gold_spans"]) for i in instances) > 0
    assert [i["label"].label for i in instances] == [e["relation"] for e in semeval]


def test_hub_datasets_errors_name_what_exists(tiny_luke_dir, tmp_path):
    Dataset.from_dict({"tokens": [["a"]], "ner_tags": [["O"]]}).save_to_disk(str(tmp_path / "one"))
    DatasetDict(
        {
            "train": Dataset.from_dict({"tokens": [["a"]], "ner_tags": [["O"]]}),
            "test": Dataset.from_dict({"tokens": [["b"]], "ner_tags": [["O"]]}),
        }
    ).save_to_disk(str(tmp_path / "both"))
    reader = LukeConll2003Reader(str(tiny_luke_dir))
    assert [i["metadata"]["words"] for i in reader.read(f"{tmp_path / 'both'}@test")] == [["b"]]
    for path, message in (
        (f"{tmp_path / 'both'}", r"both: which split\? It has train, test: write .*both@train"),
        (f"{tmp_path / 'both'}@dev", r"both@dev: no split 'dev' \(its splits: train, test\)"),
        (f"{tmp_path / 'one'}@train", r"holds one dataset, not splits"),
        (
            "hf://someone/not-cached@train",
            r"hf://someone/not-cached@train: the Hub cannot be reached and the dataset is not in the local datasets cache",
        ),
    ):
        with pytest.raises(ValueError, match=message):
            list(reader.read(path))
    with pytest.raises(
        FileNotFoundError,
        match=r"conll2003: no such file or directory \(a Hugging Face dataset is named hf://conll2003\)",
    ):
        list(reader.read("conll2003"))


def test_entity_disambiguation_dataset(ed_conll, tmp_path):
    """The ED benchmark file's documents as rows (text, mentions with their gold title, candidates and priors) give
    the file's instances."""
    reader = LukeEntityDisambiguationReader(str(ed_conll["model"]))
    native = list(reader.read(str(ed_conll["benchmark"])))
    documents = read_benchmark(ed_conll["benchmark"])
    rows = [
        {
            "id": d.id,
            "text": d.text,
            "mentions": [
                {
                    "start": m.start,
                    "end": m.end,
                    "entity": m.gold,
                    "candidates": [t for t, _ in m.candidates],
                    "priors": [p for _, p in m.candidates],
                }
                for m in d.mentions
            ],
        }
        for d in documents
    ]
    Dataset.from_list(rows).to_json(str(tmp_path / "ed.jsonl"))
    assert assert_same_instances(native, reader.read(str(tmp_path / "ed.jsonl"))) == len(native) > 0


def test_allennlp_train_evaluate_and_predict_take_dataset_paths(tiny_luke_dir, shared_data, tmp_path):
    """The real commands on configs/ner/conll2003.jsonnet unchanged: train on a Parquet file in the Hub's layout,
    evaluate a save_to_disk DatasetDict's split, predict a Parquet file (read with the archive's dataset reader)."""
    dataset = conll_dataset(conll_documents(shared_data / "conll2003" / "eng.testa", limit=1), document_ids=False)
    dataset = dataset.select(range(8))
    dataset.to_parquet(str(tmp_path / "train.parquet"))
    DatasetDict({"validation": dataset.select(range(4)), "test": dataset.select(range(4, 8))}).save_to_disk(
        str(tmp_path / "hub")
    )
    env = {
        **os.environ,
        "MODEL_NAME": str(tiny_luke_dir),
        "TRAIN_DATA_PATH": str(tmp_path / "train.parquet"),
        "VALIDATION_DATA_PATH": f"{tmp_path / 'hub'}@validation",
    }
    small = json.dumps({"trainer.num_epochs": 1, "trainer.cuda_device": -1, "dataset_reader.max_seq_length": 64})
    commands = [
        ["train", "configs/ner/conll2003.jsonnet", "-s", str(tmp_path / "out"), "-o", small],
        [
            "evaluate",
            str(tmp_path / "out" / "model.tar.gz"),
            f"{tmp_path / 'hub'}@test",
            "--output-file",
            str(tmp_path / "metrics.json"),
        ],
        [
            "predict",
            str(tmp_path / "out" / "model.tar.gz"),
            str(tmp_path / "train.parquet"),
            "--output-file",
            str(tmp_path / "p.jsonl"),
            "--silent",
        ],
    ]
    for command in commands:
        result = subprocess.run(
            [str(ALLENNLP), *command], capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert "f1" in json.loads((tmp_path / "metrics.json").read_text())
    predictions = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [p["words"] for p in predictions] == dataset["tokens"]
    assert "a dataset, not JSON lines: read with the archive's dataset reader" in result.stderr
