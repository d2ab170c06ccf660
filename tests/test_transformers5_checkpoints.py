"""
Checkpoints as transformers 5 saves them (`tokenizer.json` and `tokenizer_config.json` only, the entity vocabulary
inside the latter), read everywhere the released layout is; and imported task archives that behave as trained
ones in every command.
"""

import json
import shutil
from pathlib import Path

import torch
import transformers
from allennlp.commands.evaluate import evaluate_from_archive

from luke_allennlp.commands.import_luke_task import import_luke_task
from luke_allennlp.testing import shared_data_dir

TOLERANCE = 1e-5
OPEN_ENTITY_TYPES = ("entity", "event", "group", "location", "object", "organization", "person", "place", "time")
RELEASED_ONLY = ("vocab.json", "merges.txt", "entity_vocab.json", "sentencepiece.bpe.model")


def transformers5_typing_checkpoint(directory: Path) -> Path:
    """A `LukeForEntityClassification` built by transformers 5 from a tiny config, with the `LukeTokenizer` of
    RoBERTa's BPE (the shared data's files) and LUKE's four special entities, both saved with `save_pretrained`."""
    files = directory.parent / (directory.name + "-files")
    shutil.copytree(shared_data_dir() / "tokenizers" / "roberta-base", files)
    (files / "entity_vocab.json").write_text(json.dumps({"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}))
    tokenizer = transformers.LukeTokenizer.from_pretrained(str(files), task="entity_classification")
    torch.manual_seed(0)
    config = transformers.LukeConfig(
        vocab_size=50267, entity_vocab_size=4, hidden_size=32, entity_emb_size=16, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=37, max_position_embeddings=514, type_vocab_size=1,
        layer_norm_eps=1e-5, initializer_range=0.2, id2label=dict(enumerate(OPEN_ENTITY_TYPES)),
        label2id={label: i for i, label in enumerate(OPEN_ENTITY_TYPES)},
    )  # fmt: skip
    transformers.LukeForEntityClassification(config).save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


def test_a_transformers5_task_checkpoint_imported_and_evaluated_on_open_entity(tmp_path):
    """Acceptance (issue 19): the imported archive's probabilities on real Open Entity examples equal transformers'
    to 1e-5, and `evaluate --predictions-output-file` writes one line per example."""
    checkpoint = transformers5_typing_checkpoint(tmp_path / "typing")
    assert not any((checkpoint / name).exists() for name in RELEASED_ONLY)
    assert "entity_vocab" in json.loads((checkpoint / "tokenizer_config.json").read_text())
    examples = json.loads((shared_data_dir() / "open_entity" / "dev.json").read_text())[:48]
    data = tmp_path / "dev.json"
    data.write_text(json.dumps(examples))

    archive = import_luke_task(str(checkpoint), str(tmp_path / "imported"))
    predictions = tmp_path / "predictions.jsonl"
    metrics = evaluate_from_archive(archive, str(data), predictions_output_file=str(predictions), batch_size=16)
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(rows) == len(examples) and "f1" in metrics
    assert [row["id"] for row in rows] == [f"{data}:{i}" for i in range(len(examples))]

    tokenizer = transformers.LukeTokenizer.from_pretrained(str(checkpoint), task="entity_classification",
                                                           add_prefix_space=True)  # fmt: skip
    model = transformers.LukeForEntityClassification.from_pretrained(str(checkpoint)).eval()
    worst, spread = 0.0, 0.0
    for example, row in zip(examples, rows):
        inputs = tokenizer(example["sent"], entity_spans=[(example["start"], example["end"])], return_tensors="pt")
        with torch.no_grad():
            theirs = torch.sigmoid(model(**inputs).logits[0])
        ours = torch.tensor([row["probabilities"][label] for label in OPEN_ENTITY_TYPES])
        worst = max(worst, (ours - theirs).abs().max().item())
        spread = max(spread, (theirs - 0.5).abs().max().item())
    print(f"transformers 5 typing checkpoint: max |probability difference| {worst:.2e} over {len(rows)} examples")
    assert worst < TOLERANCE and spread > 0.05
