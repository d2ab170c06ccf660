import json

import datasets

from luke_allennlp.testing import save_roberta_tokenizer
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from tests.commands.test_build_entity_vocab import run
from tests.wikipedia.crafted import write_crafted_dump


def test_build_pretraining_corpus_command(tmp_path):
    dump = write_crafted_dump(tmp_path / "crafted.xml")
    save_roberta_tokenizer(tmp_path / "tokenizer")
    vocab, _ = build_entity_vocab(dump)
    vocab.save_jsonl(tmp_path / "vocab.jsonl")
    out = tmp_path / "corpus"
    args = [str(dump), str(tmp_path / "tokenizer"), str(tmp_path / "vocab.jsonl"), str(out)]
    result = run(
        "build-pretraining-corpus", *args, "--max-seq-length", "64", "--unknown-entities", "unk", "--num-workers", "2"
    )
    assert result.returncode == 0, result.stderr
    corpus = datasets.load_from_disk(str(out))
    metadata = json.loads((out / "metadata.json").read_text())
    assert corpus.num_rows == metadata["sequences"] == 3 and corpus["page_id"] == [10, 20, 30]
    assert (metadata["max_seq_length"], metadata["unknown_entities"], metadata["num_workers"]) == (64, "unk", 2)
    assert metadata["entities"] == 15 and metadata["unk_entities"] == 4
    assert all(len(row) <= 62 for row in corpus["word_ids"])
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("data-")) == [
        "dataset_info.json",
        "entity_vocab.jsonl",
        "metadata.json",
        "state.json",
        "tokenizer",
    ]
