import json
import os
import subprocess
import sys
from pathlib import Path

from allennlp.commands.train import train_model_from_file

from data_readers.luke_conll2003 import LukeConll2003Reader
from luke_allennlp.data.tags import tags_to_spans
from tests.conftest import REPO_ROOT


def test_evaluate_writes_one_line_per_sentence(tiny_luke_dir, conll_slice, tmp_path, monkeypatch):
    env = {
        "MODEL_NAME": str(tiny_luke_dir),
        "TRAIN_DATA_PATH": str(conll_slice),
        "VALIDATION_DATA_PATH": str(conll_slice),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    overrides = {"trainer.num_epochs": 1, "dataset_reader.max_seq_length": 64}
    train_model_from_file(
        str(REPO_ROOT / "configs/ner/conll2003.jsonnet"), str(tmp_path / "run"), overrides=json.dumps(overrides)
    )
    predictions = tmp_path / "predictions.jsonl"
    command = [
        str(Path(sys.executable).with_name("allennlp")),
        "evaluate",
        str(tmp_path / "run" / "model.tar.gz"),
        str(conll_slice),
        "--predictions-output-file",
        str(predictions),
        "--batch-size",
        "3",
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    sentences = [s for doc in LukeConll2003Reader(str(tiny_luke_dir)).read_documents(str(conll_slice)) for s in doc]
    assert len(rows) == len(sentences) == 29
    for row, sentence in zip(rows, sentences):
        assert row["words"] == sentence.words
        assert tags_to_spans(row["gold_tags"], "iob2") == tags_to_spans(sentence.tags, "iob1")  # IOB2 of the gold
        assert len(row["tags"]) == len(row["words"]) and "predicted_tags" not in row  # `tags` are the predicted ones
