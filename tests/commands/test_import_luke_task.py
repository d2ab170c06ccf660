"""`allennlp import-luke-task`: tiny random transformers task checkpoints, saved locally with their LukeTokenizer
files, become archives whose readers build LukeTokenizer's inputs (its `task=` mode) and whose models give
transformers' logits on them."""

import json
import subprocess
from pathlib import Path

import pytest
import torch
import transformers
from allennlp.data import Batch
from allennlp.models.archival import load_archive

from luke_allennlp.archival.import_luke_task import import_luke_task
from luke_allennlp.testing import write_tiny_task_checkpoint
from tests.conftest import ALLENNLP, REPO_ROOT

TOLERANCE = 1e-5
# Sentences of the tests, with their mentions (character spans): head, tail.
TEXT = "Peter Blackburn visited the Brussels office of the European Commission yesterday ."
HEAD, TAIL = (0, 15), (28, 36)  # "Peter Blackburn", "Brussels"
CONLL = """-DOCSTART- -X- -X- O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER
visited VBD B-VP O
Brussels NNP B-NP B-LOC
. . O O

-DOCSTART- -X- -X- O

Japan NNP B-NP B-LOC
beat VBD B-VP O
Syria NNP B-NP B-LOC
. . O O
"""


def transformers_inputs(checkpoint: Path, task: str, text: str, spans):
    tokenizer = transformers.LukeTokenizer.from_pretrained(
        str(checkpoint), task=task, add_prefix_space=True, max_entity_length=128
    )
    return tokenizer(text, entity_spans=spans, return_tensors="pt")


def model_of(checkpoint: Path, architecture: str):
    return getattr(transformers, architecture).from_pretrained(str(checkpoint)).eval()


def forward(archive, instances):
    batch = Batch(instances)
    batch.index_instances(archive.model.vocab)
    with torch.no_grad():
        return archive.model.eval()(**batch.as_tensor_dict()), batch.as_tensor_dict()


@pytest.fixture(scope="module")
def relation_checkpoint(tmp_path_factory):
    return write_tiny_task_checkpoint(
        tmp_path_factory.mktemp("tacred"),
        "LukeForEntityPairClassification",
        ["no_relation", "per:city_of_residence", "org:members"],
        task="entity_pair_classification",
        seed=1,
    )


def test_relation_checkpoint_through_the_command(relation_checkpoint, tmp_path):
    """The command line; the reader puts <ent>/<ent2> where LukeTokenizer does; [MASK2] becomes [TAIL]."""
    out = tmp_path / "imported"
    result = subprocess.run(
        [str(ALLENNLP), "import-luke-task", str(relation_checkpoint), str(out)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "luke_relation_classifier from LukeForEntityPairClassification" in result.stdout
    archive = load_archive(str(out / "model.tar.gz"))
    assert archive.config["dataset_reader"]["entity_marker_tokens"] == ["<ent>", "<ent2>"]
    assert archive.model.vocab.get_index_to_token_vocabulary("labels") == {
        0: "no_relation",
        1: "per:city_of_residence",
        2: "org:members",
    }
    instance = archive.dataset_reader.text_to_instance(TEXT, HEAD, TAIL)
    ours, tensors = forward(archive, [instance])
    inputs = transformers_inputs(relation_checkpoint, "entity_pair_classification", TEXT, [HEAD, TAIL])
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    positions = inputs["entity_position_ids"][0]
    for i, (start, end) in enumerate(zip(tensors["entity_start_positions"][0], tensors["entity_end_positions"][0])):
        assert positions[i][positions[i] >= 0].tolist() == list(range(start, end + 1))
    with torch.no_grad():
        theirs = model_of(relation_checkpoint, "LukeForEntityPairClassification")(**inputs).logits
    difference = (ours["logits"] - theirs).abs().max().item()
    print(f"relation import: max |logit difference| {difference:.2e}")
    assert difference < TOLERANCE and theirs.abs().max() > 1e-2
    # The task entities are the checkpoint's [MASK] (id 0 of the lite order), [MASK] and [MASK2].
    table = archive.model.embedder.luke.entity_embeddings.entity_embeddings.weight
    theirs_table = model_of(
        relation_checkpoint, "LukeForEntityPairClassification"
    ).luke.entity_embeddings.entity_embeddings.weight
    assert torch.equal(table[2], theirs_table[0]) and torch.equal(table[3], theirs_table[3])
    assert torch.equal(table[0], theirs_table[2])


def test_a_checkpoint_naming_its_own_code_runs_none_of_it(relation_checkpoint, tmp_path):
    """A task checkpoint whose config and tokenizer config name Python files of their own (`auto_map`, transformers'
    remote code): importing it, and loading and running the archive, never imports them (issue 28: loading shared
    files runs nothing they name)."""
    import shutil

    checkpoint = tmp_path / "crafted"
    shutil.copytree(relation_checkpoint, checkpoint)
    marker = tmp_path / "code-ran"
    (checkpoint / "crafted_code.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    for name, classes in (("config.json", ("AutoConfig", "AutoModel")), ("tokenizer_config.json", ("AutoTokenizer",))):
        config = json.loads((checkpoint / name).read_text())
        config["auto_map"] = {
            c: ["crafted_code.Crafted", None] if c == "AutoTokenizer" else "crafted_code.Crafted" for c in classes
        }
        (checkpoint / name).write_text(json.dumps(config))
    archive = load_archive(import_luke_task(str(checkpoint), str(tmp_path / "imported")))
    forward(archive, [archive.dataset_reader.text_to_instance(TEXT, HEAD, TAIL)])
    assert not marker.exists()


def test_ner_checkpoint_nil_label_and_spans(tmp_path):
    """The original LUKE's NIL label becomes O; every span the reader scores gets transformers' logits."""
    checkpoint = write_tiny_task_checkpoint(
        tmp_path / "conll",
        "LukeForEntitySpanClassification",
        ["NIL", "MISC", "PER", "ORG", "LOC"],
        task="entity_span_classification",
        entity_vocab={"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "Japan": 3, "[MASK2]": 4},
    )
    archive = load_archive(import_luke_task(str(checkpoint), str(tmp_path / "imported")))
    assert archive.model.labels == ["O", "MISC", "PER", "ORG", "LOC"]
    data = tmp_path / "two.conll"
    data.write_text(CONLL)
    instances = list(archive.dataset_reader.read(str(data)))
    ours, tensors = forward(archive, instances)
    theirs_model = model_of(checkpoint, "LukeForEntitySpanClassification")
    worst = 0.0
    for row, instance in enumerate(instances):
        words, spans = instance["metadata"]["words"], instance["metadata"]["spans"].tolist()
        starts = [sum(len(w) + 1 for w in words[:i]) for i in range(len(words) + 1)]
        char_spans = [(starts[s], starts[e] - 1) for s, e in spans]
        inputs = transformers_inputs(checkpoint, "entity_span_classification", " ".join(words), char_spans)
        assert tensors["word_ids"][row][: inputs["input_ids"].size(1)].tolist() == inputs["input_ids"][0].tolist()
        with torch.no_grad():
            theirs = theirs_model(**inputs).logits[0]
        worst = max(worst, (ours["span_logits"][row, : len(spans)] - theirs).abs().max().item())
    print(
        f"NER import: max |logit difference| {worst:.2e} over {sum(len(i['metadata']['spans']) for i in instances)} spans"
    )
    assert worst < TOLERANCE
    metrics = archive.model.get_metrics(reset=True)
    assert set(metrics) >= {"f1", "precision", "recall"}


def test_typing_checkpoint(tmp_path, shared_data):
    checkpoint = write_tiny_task_checkpoint(
        tmp_path / "open-entity",
        "LukeForEntityClassification",
        ["entity", "event", "group", "location", "object", "organization", "person", "place", "time"],
        task="entity_classification",
        seed=2,
    )
    archive = load_archive(import_luke_task(str(checkpoint), str(tmp_path / "imported")))
    ours, tensors = forward(archive, [archive.dataset_reader.text_to_instance(TEXT, TAIL)])
    inputs = transformers_inputs(checkpoint, "entity_classification", TEXT, [TAIL])
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    with torch.no_grad():
        theirs = model_of(checkpoint, "LukeForEntityClassification")(**inputs).logits
    difference = (ours["logits"] - theirs).abs().max().item()
    print(f"typing import: max |logit difference| {difference:.2e}")
    assert difference < TOLERANCE
    # A mention longer than LukeTokenizer's max_mention_length (30 subwords): its entity has the positions of the
    # first 30 (transformers' and the original code's cap), and the reader counts it.
    assert json.loads((checkpoint / "tokenizer_config.json").read_text())["max_mention_length"] == 30
    mention = "the long-standing International Federation of Association Football World Cup Organising Committee " * 3
    text = f"Yesterday {mention.strip()} met in Zurich ."
    span = (len("Yesterday "), len("Yesterday ") + len(mention.strip()))
    inputs = transformers_inputs(checkpoint, "entity_classification", text, [span])
    assert (inputs["entity_position_ids"] >= 0).sum() == 30 < len(inputs["input_ids"][0]) - 8
    reader = archive.dataset_reader
    reader.inputs.reset_stats()
    ours, tensors = forward(archive, [reader.text_to_instance(text, span)])
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    assert reader.stats["mention_positions_capped"] == 1
    with torch.no_grad():
        theirs = model_of(checkpoint, "LukeForEntityClassification")(**inputs).logits
    assert (ours["logits"] - theirs).abs().max().item() < TOLERANCE
    # A real Open Entity example (train.json's longest mention, 216 characters): the same through the reader's file.
    examples = json.loads((shared_data / "open_entity" / "train.json").read_text())
    longest = max(examples, key=lambda e: e["end"] - e["start"])
    (tmp_path / "long.json").write_text(json.dumps([longest]))
    [instance] = reader.read(str(tmp_path / "long.json"))
    span = (longest["start"], longest["end"])
    inputs = transformers_inputs(checkpoint, "entity_classification", longest["sent"], [span])
    ours, tensors = forward(archive, [instance])
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    assert reader.stats["mention_positions_capped"] == 1 and (inputs["entity_position_ids"] >= 0).sum() == 30
    with torch.no_grad():
        theirs = model_of(checkpoint, "LukeForEntityClassification")(**inputs).logits
    assert (ours["logits"] - theirs).abs().max().item() < TOLERANCE


def test_squad_checkpoint_keeps_its_entity_table(tmp_path, squad_slice):
    checkpoint = write_tiny_task_checkpoint(
        tmp_path / "squad",
        "LukeForQuestionAnswering",
        entity_vocab={"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "Denver Broncos": 3, "[MASK2]": 4},
    )
    archive = load_archive(import_luke_task(str(checkpoint), str(tmp_path / "imported"), task="squad"))
    instance = next(iter(archive.dataset_reader.read(str(squad_slice))))
    ours, tensors = forward(archive, [instance])
    window = tensors["word_ids"][0]  # (windows, words)
    theirs_model = model_of(checkpoint, "LukeForQuestionAnswering")
    with torch.no_grad():
        theirs = theirs_model(input_ids=window, attention_mask=tensors["word_attention_mask"][0].long())
    table = archive.model.embedder.luke.entity_embeddings.entity_embeddings.weight
    assert table.shape[0] == 5 and torch.equal(table, theirs_model.luke.entity_embeddings.entity_embeddings.weight)
    mask = tensors["word_attention_mask"][0]
    difference = max(
        (ours[f"{side}_logits"][0][mask] - getattr(theirs, f"{side}_logits")[mask]).abs().max().item()
        for side in ("start", "end")
    )
    print(f"SQuAD import: max |logit difference| {difference:.2e}")
    assert difference < TOLERANCE


def test_errors_name_the_problem(relation_checkpoint, tmp_path):
    with pytest.raises(ValueError, match="is a LukeForEntityPairClassification, not a LukeForEntitySpanClassification"):
        import_luke_task(str(relation_checkpoint), str(tmp_path / "x"), task="ner")
    config = json.loads((relation_checkpoint / "config.json").read_text())
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in relation_checkpoint.iterdir():
        (broken / name.name).write_bytes(name.read_bytes())
    (broken / "config.json").write_text(json.dumps({**config, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}))
    with pytest.raises(ValueError, match="names no labels"):
        import_luke_task(str(broken), str(tmp_path / "y"))
    with pytest.raises(OSError, match="is not a local directory, is not in the Hugging Face cache"):
        import_luke_task("studio-ousia/luke-large-finetuned-conll-2003", str(tmp_path / "z"))
