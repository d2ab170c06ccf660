"""`allennlp export-luke` of fine-tuned task archives: trained with the repository's configs on tiny data, written as
transformers task classes with their LukeTokenizer (task mode, special entities), loadable without missing or
unexpected keys, and computing the archive's logits on the inputs the exported tokenizer builds."""

import json
import subprocess
from pathlib import Path

import pytest
import torch
import transformers
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive

from luke_allennlp.archival.export_luke import export_luke
from luke_allennlp.archival.import_luke_task import import_luke_task
from luke_allennlp.testing import write_tiny_task_checkpoint
from tests.commands.test_import_luke_task import CONLL, HEAD, TAIL, TEXT, forward
from tests.conftest import ALLENNLP, REPO_ROOT, set_config_env

TOLERANCE = 1e-5
TINY = {
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 8,
    "dataset_reader.max_seq_length": 64,
    "trainer.optimizer.lr": 1e-2,
}


def train(config: str, model_dir: Path, data: Path, out: Path, **overrides) -> Path:
    with pytest.MonkeyPatch.context() as monkeypatch:
        set_config_env(monkeypatch, model_dir, data)
        train_model_from_file(
            str(REPO_ROOT / "configs" / config), str(out), overrides=json.dumps({**TINY, **overrides})
        )
    return out / "model.tar.gz"


def loaded(directory: Path, architecture: str):
    model, info = getattr(transformers, architecture).from_pretrained(str(directory), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"], info
    return model.eval()


def test_trained_ner_archive(tiny_luke_dir, conll_slice, tmp_path):
    """From a checkpoint without <ent>/<ent2> (rows added, from @/#); through the command line, run outside the
    repository (no `.allennlp_plugins` there: the compat layer's plugin discovery finds the plugin)."""
    archive_file = train("ner/conll2003.jsonnet", tiny_luke_dir, conll_slice, tmp_path / "run")
    out = tmp_path / "exported"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [str(ALLENNLP), "export-luke", str(archive_file), str(out)],
        capture_output=True,
        text=True,
        cwd=elsewhere,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "LukeForEntitySpanClassification" in result.stdout and "task=entity_span_classification" in result.stdout
    model = loaded(out, "LukeForEntitySpanClassification")
    archive = load_archive(str(archive_file))
    assert model.config.id2label == dict(enumerate(archive.model.labels))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(out), add_prefix_space=True)
    assert isinstance(tokenizer, transformers.LukeTokenizer) and tokenizer.task == "entity_span_classification"
    assert json.loads((out / "entity_vocab.json").read_text()) == {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}
    data = tmp_path / "two.conll"
    data.write_text(CONLL)
    instances = list(archive.dataset_reader.read(str(data)))
    ours, tensors = forward(archive, instances)
    worst = 0.0
    for row, instance in enumerate(instances):
        words, spans = instance["metadata"]["words"], instance["metadata"]["spans"].tolist()
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words) + 1)]
        inputs = tokenizer(
            " ".join(words), entity_spans=[(starts[s], starts[e] - 1) for s, e in spans], return_tensors="pt"
        )
        assert tensors["word_ids"][row][: inputs["input_ids"].size(1)].tolist() == inputs["input_ids"][0].tolist()
        with torch.no_grad():
            theirs = model(**inputs).logits[0]
        worst = max(worst, (ours["span_logits"][row, : len(spans)] - theirs).abs().max().item())
    print(f"NER export: max |logit difference| {worst:.2e}")
    assert worst < TOLERANCE


def test_trained_relation_archive_with_luke_markers(tacred_train, tmp_path):
    """Fine-tuned from a LUKE checkpoint that has <ent>/<ent2>, with the markers: the export's tokenizer is in
    entity_pair_classification mode; [MASK]/[MASK2] are the archive's [HEAD]/[TAIL]."""
    base = write_tiny_task_checkpoint(
        tmp_path / "base", "LukeModel", entity_vocab={"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}
    )
    archive_file = train(
        "relation_classification/tacred.jsonnet",
        base,
        tacred_train,
        tmp_path / "run",
        **{"dataset_reader.entity_marker_tokens": ["<ent>", "<ent2>"]},
    )
    out = tmp_path / "exported"
    export_luke(str(archive_file), str(out))
    model = loaded(out, "LukeForEntityPairClassification")
    archive = load_archive(str(archive_file))
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(out), add_prefix_space=True)
    assert tokenizer.task == "entity_pair_classification"
    ours, tensors = forward(archive, [archive.dataset_reader.text_to_instance(TEXT, HEAD, TAIL)])
    inputs = tokenizer(TEXT, entity_spans=[HEAD, TAIL], return_tensors="pt")
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    with torch.no_grad():
        theirs = model(**inputs).logits
    difference = (ours["logits"] - theirs).abs().max().item()
    print(f"relation export: max |logit difference| {difference:.2e}")
    assert difference < TOLERANCE
    table = model.luke.entity_embeddings.entity_embeddings.weight
    ours_table = archive.model.embedder.luke.entity_embeddings.entity_embeddings.weight
    assert torch.equal(table[2], ours_table[2]) and torch.equal(table[3], ours_table[3])  # [HEAD], [TAIL]


def test_round_trip_typing_and_squad(tmp_path, squad_slice):
    """import-luke-task then export-luke gives back the checkpoint's weights (typing: in the task mode, since the
    imported reader puts <ent> markers)."""
    typing = write_tiny_task_checkpoint(
        tmp_path / "typing", "LukeForEntityClassification", ["person", "place"], task="entity_classification", seed=3
    )
    export_luke(import_luke_task(str(typing), str(tmp_path / "typing-archive")), str(tmp_path / "typing-out"))
    original, again = (
        loaded(typing, "LukeForEntityClassification"),
        loaded(tmp_path / "typing-out", "LukeForEntityClassification"),
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "typing-out"))
    assert tokenizer.task == "entity_classification"
    inputs = tokenizer(TEXT, entity_spans=[TAIL], return_tensors="pt")  # [MASK] = 2 here, 0 in the original's
    original_inputs = transformers.AutoTokenizer.from_pretrained(str(typing))(
        TEXT, entity_spans=[TAIL], return_tensors="pt"
    )
    assert torch.equal(inputs["input_ids"], original_inputs["input_ids"])
    with torch.no_grad():
        assert (original(**original_inputs).logits - again(**inputs).logits).abs().max() < TOLERANCE

    squad = write_tiny_task_checkpoint(
        tmp_path / "squad",
        "LukeForQuestionAnswering",
        entity_vocab={"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "Denver Broncos": 3, "[MASK2]": 4},
    )
    archive_file = import_luke_task(str(squad), str(tmp_path / "squad-archive"))
    export_luke(archive_file, str(tmp_path / "squad-out"))
    again = loaded(tmp_path / "squad-out", "LukeForQuestionAnswering")
    entities = json.loads((tmp_path / "squad-out" / "entity_vocab.json").read_text())
    assert entities["Denver Broncos"] == 3 and entities["[MASK2]"] == 4  # the checkpoint's whole table, in its order
    export_luke(archive_file, str(tmp_path / "squad-lite"), lite=True)
    lite = loaded(tmp_path / "squad-lite", "LukeForQuestionAnswering")
    assert lite.config.entity_vocab_size == 4
    archive = load_archive(archive_file)
    ours, tensors = forward(archive, [next(iter(archive.dataset_reader.read(str(squad_slice))))])
    window, mask = tensors["word_ids"][0], tensors["word_attention_mask"][0]
    for model in (again, lite):
        with torch.no_grad():
            theirs = model(input_ids=window, attention_mask=mask.long())
        assert (ours["start_logits"][0][mask] - theirs.start_logits[mask]).abs().max() < TOLERANCE


def test_refuses_what_transformers_cannot_hold(tacred_train, tiny_luke_dir, tmp_path):
    archive_file = train(
        "relation_classification/tacred.jsonnet", tiny_luke_dir, tacred_train, tmp_path / "run", **{"model.bias": True}
    )
    with pytest.raises(ValueError, match="its classifier has a bias, which LukeForEntityPairClassification lacks"):
        export_luke(str(archive_file), str(tmp_path / "out"))
