"""Data paths read with Hugging Face `datasets`: the Hub (offline, from the cache), save_to_disk, local files."""

import glob
import os
import shutil

import datasets
import pytest
from datasets import ClassLabel, Dataset, Features, Sequence, Value

from luke_allennlp.data.crosslingual_mentions import language_of_file
from luke_allennlp.evaluation.cross_lingual import languages_from_name
from luke_allennlp.resources import hf_datasets
from luke_allennlp.resources.hf_datasets import (
    DatasetSourceError,
    HubPath,
    first_json,
    is_dataset_path,
    open_rows,
    parse_hub_path,
    source_name,
)

FEATURES = Features(
    {"tokens": Sequence(Value("string")), "ner_tags": Sequence(ClassLabel(names=["O", "B-PER", "I-PER"]))}
)
ROWS = {"tokens": [["Ann", "Lee", "sings"], ["Bob"]], "ner_tags": [[1, 2, 0], [1]]}


def never_native(path):
    return False


def test_hub_path_syntax():
    assert parse_hub_path("hf://conll2003@train") == HubPath("conll2003", None, "train")
    assert parse_hub_path("hf://xquad:xquad.de@validation") == HubPath("xquad", "xquad.de", "validation")
    assert parse_hub_path("hf://DFKI-SLT/tacred:original@test[:10%]") == HubPath(
        "DFKI-SLT/tacred", "original", "test[:10%]"
    )
    assert parse_hub_path("hf://squad") == HubPath("squad", None, None)
    assert parse_hub_path("hf://owner/repo/train.json") is None  # (cached_path's file in a Hub repository)
    assert parse_hub_path("data/train.parquet") is None
    with pytest.raises(DatasetSourceError, match=r"hf://a b@train: not a Hugging Face dataset path; write hf://NAME"):
        parse_hub_path("hf://a b@train")
    assert source_name("hf://xquad:xquad.de@validation") == "xquad.de" and source_name("hf://x/y@train") == "y"
    assert source_name("/data/xquad.de.json") == "xquad.de.json"
    assert (
        language_of_file("hf://xquad:xquad.el@validation") == "el"
        and language_of_file("hf://mlqa:mlqa.de.en@test") == "de"
    )
    assert languages_from_name("hf://xquad:xquad.de@validation") == ("de", None)
    assert languages_from_name("hf://mlqa:mlqa.de.en@test") == ("de", "en")


def test_local_files_and_save_to_disk_directories(tmp_path):
    dataset = Dataset.from_dict(ROWS, features=FEATURES)
    dataset.to_parquet(str(tmp_path / "a.parquet"))
    dataset.to_json(str(tmp_path / "a.jsonl"))
    dataset.save_to_disk(str(tmp_path / "saved"))
    datasets.DatasetDict({"train": dataset, "test": dataset.select([1])}).save_to_disk(str(tmp_path / "dict"))
    shards = glob.glob(str(tmp_path / "saved" / "*.arrow"))
    shutil.copy(shards[0], tmp_path / "a.arrow")
    Dataset.from_dict({"text": ["x y", "z"], "label": [1, 0]}).to_csv(str(tmp_path / "a.csv"), index=False)
    Dataset.from_dict({"text": ["x, y", "z"], "label": [1, 0]}).to_csv(str(tmp_path / "a.tsv"), sep="\t", index=False)
    for name in ("a.parquet", "saved", "a.arrow"):
        rows = open_rows(str(tmp_path / name), never_native)
        assert [row for _, row in rows] == [dict(zip(ROWS, r)) for r in zip(*ROWS.values())]
        assert rows.class_names("ner_tags") == ["O", "B-PER", "I-PER"] and rows.columns == ["tokens", "ner_tags"]
    rows = open_rows(str(tmp_path / "a.jsonl"), never_native)  # (JSON keeps no ClassLabel)
    assert rows.class_names("ner_tags") is None and [r["ner_tags"] for _, r in rows] == [[1, 2, 0], [1]]
    assert [r["text"] for _, r in open_rows(str(tmp_path / "a.tsv"), never_native)] == ["x, y", "z"]
    assert [r["label"] for _, r in open_rows(str(tmp_path / "a.csv"), never_native)] == [1, 0]
    assert [r["tokens"] for _, r in open_rows(f"{tmp_path / 'dict'}@test", never_native)] == [["Bob"]]
    assert rows.where(3) == f"{tmp_path / 'a.jsonl'}, row 3"
    # The reader's own formats stay its own: a file it recognises, a file no builder reads, a plain directory.
    assert open_rows(str(tmp_path / "a.jsonl"), lambda path: True) is None
    (tmp_path / "eng.testa").write_text("EU B-ORG\n")
    assert open_rows(str(tmp_path / "eng.testa"), never_native) is None
    (tmp_path / "plain").mkdir()
    assert open_rows(str(tmp_path / "plain"), never_native) is None
    assert is_dataset_path(str(tmp_path / "a.parquet")) and is_dataset_path(str(tmp_path / "saved"))
    assert is_dataset_path(f"{tmp_path / 'dict'}@train") and is_dataset_path("hf://squad@validation")
    assert not is_dataset_path(str(tmp_path / "a.jsonl")) and not is_dataset_path(str(tmp_path / "plain"))
    with pytest.raises(DatasetSourceError, match=r"a.parquet@train: a split \(@train\) names part of a Hub dataset"):
        open_rows(f"{tmp_path / 'a.parquet'}@train", never_native)
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(DatasetSourceError, match=r"broken.parquet: not readable as parquet"):
        open_rows(str(tmp_path / "broken.parquet"), never_native)


def test_first_json_tells_json_documents_from_json_lines(tmp_path):
    cases = {
        "squad.json": ('{"version": "1.1", "data": []}', ("lines", {"version": "1.1", "data": []})),
        "pretty.json": ('{\n  "data": []\n}', ("document", None)),
        "tacred.json": ('[{"id": 1}]', ("array", None)),
        "rows.jsonl": ('\n{"a": 1}\n{"a": 2}\n', ("lines", {"a": 1})),
        "semeval.txt": ('1\t"<e1>a</e1> <e2>b</e2>"\n', ("text", None)),
    }
    for name, (text, expected) in cases.items():
        (tmp_path / name).write_text(text)
        assert first_json(str(tmp_path / name)) == expected
    assert first_json(str(tmp_path)) == ("directory", None)


def cache_a_hub_dataset(cache: str, name: str) -> None:
    """What `load_dataset(name)` leaves in the datasets cache after a download (a Parquet dataset of two splits),
    built offline: the prepared Arrow files under `{owner}___{name}/default/0.0.0/{hash}`."""
    builder = datasets.load_dataset_builder(
        "parquet",
        data_files={"train": os.path.join(cache, "x.parquet"), "validation": os.path.join(cache, "x.parquet")},
        cache_dir=os.path.join(cache, "build"),
    )
    builder.download_and_prepare()
    owner, repo = name.split("/")
    target = os.path.join(cache, f"{owner}___{repo}", "default", "0.0.0", os.path.basename(builder.cache_dir))
    shutil.copytree(builder.cache_dir, target)
    for path in glob.glob(os.path.join(target, "parquet-*.arrow")):
        os.rename(path, path.replace("parquet-", f"{repo}-"))


def test_a_hub_dataset_is_read_from_the_cache_offline(tmp_path, monkeypatch):
    """`hf://someone/tiny@validation` with HF_HUB_OFFLINE=1 (the suite's): the cached copy, prepared or streamed; the
    splits named when one is missing or wrong; a dataset not in the cache is one line saying what to do."""
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path))
    Dataset.from_dict(ROWS, features=FEATURES).to_parquet(str(tmp_path / "x.parquet"))
    cache_a_hub_dataset(str(tmp_path), "someone/tiny")
    for streaming in (False, True):
        rows = open_rows("hf://someone/tiny@validation", never_native, streaming=streaming)
        assert [r["tokens"] for _, r in rows] == ROWS["tokens"] and rows.class_names("ner_tags") == [
            "O",
            "B-PER",
            "I-PER",
        ]
        assert isinstance(rows.dataset, datasets.IterableDataset) == streaming
    assert len(list(open_rows("hf://someone/tiny@train[:1]", never_native))) == 1
    for path, message in (
        (
            "hf://someone/tiny",
            r"hf://someone/tiny: which split\? The dataset has train, validation: write hf://someone/tiny@train",
        ),
        ("hf://someone/tiny@dev", r"hf://someone/tiny@dev: no split 'dev' \(its splits: train, validation\)"),
        (
            "hf://someone/tiny:other@train",
            r"hf://someone/tiny:other@train: Couldn't find cache for someone/tiny for config 'other' Available configs in the cache: \['default'\]",
        ),
        (
            "hf://someone/elsewhere@train",
            r"hf://someone/elsewhere@train: the Hub cannot be reached and the dataset is not in the local datasets cache .*load it once online",
        ),
    ):
        with pytest.raises(DatasetSourceError, match=message):
            open_rows(path, never_native)


def test_a_dataset_with_a_loading_script_is_read_from_its_parquet_conversion(monkeypatch, caplog):
    """datasets 4 runs no loading script (conll2003's repository holds one): the Hub's Parquet conversion instead."""
    calls = []

    def load_dataset(name, config, split, streaming, revision=None):
        calls.append((name, config, split, streaming, revision))
        if revision is None:
            raise RuntimeError("Dataset scripts are no longer supported, but found conll2003.py")
        return Dataset.from_dict(ROWS, features=FEATURES)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    rows = open_rows("hf://eriktks/conll2003:conll2003@train", never_native)
    assert len(list(rows)) == 2 and calls[-1] == (
        "eriktks/conll2003",
        "conll2003",
        "train",
        False,
        hf_datasets.PARQUET_REVISION,
    )
    assert "holds a loading script" in caplog.text and "refs/convert/parquet" in caplog.text
