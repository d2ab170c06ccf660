"""
Checkpoints as transformers 5 saves them (`tokenizer.json` and `tokenizer_config.json` only, the entity vocabulary
inside the latter), read everywhere the released layout is; and imported task archives that behave as trained
ones in every command.
"""

import json
import shutil
from pathlib import Path

import datasets
import pytest
import sentencepiece
import torch
import transformers
from allennlp.commands.evaluate import evaluate_from_archive
from allennlp.commands.train import train_model, train_model_from_file
from allennlp.common import Params
from allennlp.models import Model
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from luke_allennlp.archival.export_luke import export_luke
from luke_allennlp.archival.import_luke_task import import_luke_task
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder
from luke_allennlp.resources.checkpoint_tokenizer import special_entity_ids
from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.tokenization import load_fast_tokenizer, load_tokenizer
from luke_allennlp.testing import (
    resave_with_transformers,
    shared_data_dir,
    write_tiny_checkpoint,
    write_tiny_task_checkpoint,
)
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from tests.conftest import REPO_ROOT, set_config_env
from tests.wikipedia.crafted import write_crafted_dump

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
        vocab_size=50267,
        entity_vocab_size=4,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=514,
        type_vocab_size=1,
        layer_norm_eps=1e-5,
        initializer_range=0.2,
        id2label=dict(enumerate(OPEN_ENTITY_TYPES)),
        label2id={label: i for i, label in enumerate(OPEN_ENTITY_TYPES)},
    )
    transformers.LukeForEntityClassification(config).save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return directory


@pytest.fixture(scope="module")
def typing_import(tmp_path_factory):
    """The transformers 5 typing checkpoint, its imported archive, and 48 real Open Entity dev examples."""
    root = tmp_path_factory.mktemp("typing")
    checkpoint = transformers5_typing_checkpoint(root / "checkpoint")
    examples = json.loads((shared_data_dir() / "open_entity" / "dev.json").read_text())[:48]
    data = root / "dev.json"
    data.write_text(json.dumps(examples))
    return checkpoint, import_luke_task(str(checkpoint), str(root / "imported")), data


def transformers_probabilities(checkpoint: Path, sentence: str, span) -> torch.Tensor:
    tokenizer = transformers.LukeTokenizer.from_pretrained(
        str(checkpoint), task="entity_classification", add_prefix_space=True
    )
    model = transformers.LukeForEntityClassification.from_pretrained(str(checkpoint)).eval()
    with torch.no_grad():
        return torch.sigmoid(model(**tokenizer(sentence, entity_spans=[tuple(span)], return_tensors="pt")).logits[0])


def test_a_transformers5_task_checkpoint_imported_and_evaluated_on_open_entity(typing_import, tmp_path):
    """The imported archive's probabilities on real Open Entity examples equal transformers'
    to 1e-5, and `evaluate --predictions-output-file` writes one line per example."""
    checkpoint, archive, data = typing_import
    assert not any((checkpoint / name).exists() for name in RELEASED_ONLY)
    assert "entity_vocab" in json.loads((checkpoint / "tokenizer_config.json").read_text())
    examples = json.loads(data.read_text())
    predictions = tmp_path / "predictions.jsonl"
    metrics = evaluate_from_archive(archive, str(data), predictions_output_file=str(predictions), batch_size=16)
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(rows) == len(examples) and "f1" in metrics
    assert [row["id"] for row in rows] == [f"{data}:{i}" for i in range(len(examples))]

    tokenizer = transformers.LukeTokenizer.from_pretrained(
        str(checkpoint), task="entity_classification", add_prefix_space=True
    )
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


def test_an_imported_archive_predicts_exports_and_initialises_as_a_trained_one(typing_import, tmp_path):
    checkpoint, archive, data = typing_import
    example = json.loads(data.read_text())[3]
    sentence, span = example["sent"], (example["start"], example["end"])
    expected = transformers_probabilities(checkpoint, sentence, span)

    # predict
    predictor = Predictor.from_path(archive)
    output = predictor.predict_json({"sentence": sentence, "span": list(span)})
    predicted = torch.tensor([output["probabilities"][label] for label in OPEN_ENTITY_TYPES])
    assert (predicted - expected).abs().max() < TOLERANCE

    # export back: transformers loads it and computes the same
    export_luke(archive, str(tmp_path / "exported"))
    assert (transformers_probabilities(tmp_path / "exported", sentence, span) - expected).abs().max() < TOLERANCE

    # the pretrained initializer on the archive gives the imported weights
    loaded = load_archive(archive)
    imported = loaded.model.state_dict()
    model_config = loaded.config["model"].as_dict(quiet=True)
    model_config["initializer"] = {"regexes": [[".*", {"type": "pretrained", "weights_file_path": archive}]]}
    initialised = Model.from_params(vocab=loaded.model.vocab, params=Params(model_config)).state_dict()
    assert all(torch.equal(initialised[k], v) for k, v in imported.items())


@pytest.mark.slow  # ~15 s: a training run; the pretrained initializer on the archive is checked in the default suite
def test_an_imported_archive_fine_tunes_further_as_a_from_archive_model(typing_import, tmp_path):
    checkpoint, archive, data = typing_import
    imported = load_archive(archive).model.state_dict()
    config = {
        "dataset_reader": {"type": "luke_open_entity", "model_name": str(checkpoint), "entity_marker_token": "<ent>"},
        "train_data_path": str(data),
        "model": {"type": "from_archive", "archive_file": archive},
        "data_loader": {"batch_size": 16, "shuffle": False},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-3}, "cuda_device": -1},
    }
    tuned = train_model(Params(config), str(tmp_path / "tuned"))
    assert (tmp_path / "tuned" / "model.tar.gz").is_file()
    changed = tuned.state_dict()["classifier.weight"]
    assert changed.shape == imported["classifier.weight"].shape and not torch.equal(
        changed, imported["classifier.weight"]
    )


@pytest.fixture(scope="module")
def both_layouts(tmp_path_factory, tiny_mluke_dir):
    """(released layout, transformers 5's) for a LUKE checkpoint (lite entity order: [MASK] 0, [PAD] 2, and one
    real entity) and an mLUKE one (`language:title` entities)."""
    root = tmp_path_factory.mktemp("layouts")
    entities = {"[MASK]": 0, "[UNK]": 1, "[PAD]": 2, "[MASK2]": 3, "Denver Broncos": 4}
    luke = write_tiny_task_checkpoint(root / "luke", "LukeForMaskedLM", entity_vocab=entities)
    return {
        "luke": (luke, resave_with_transformers(luke, root / "luke5")),
        "mluke": (tiny_mluke_dir, resave_with_transformers(tiny_mluke_dir, root / "mluke5")),
    }


@pytest.mark.parametrize("kind", ["luke", "mluke"])
def test_both_layouts_give_the_same_tokenizer_entities_and_embedder(both_layouts, kind, caplog):
    released, saved = both_layouts[kind]
    assert {"tokenizer.json", "tokenizer_config.json"} <= {p.name for p in saved.iterdir()}
    assert not any((saved / name).exists() for name in RELEASED_ONLY)
    text = "Peter Blackburn visited Tokyo and 東京都 ; Москва [MASK] <ent> x".split()
    words = [load_fast_tokenizer(str(d)) for d in (released, saved)]
    assert words[0].get_vocab() == words[1].get_vocab()
    ids = [w(text, is_split_into_words=True)["input_ids"] for w in words]
    # the special entities are no word tokens; <ent> is one
    assert ids[0] == ids[1] and words[1].convert_tokens_to_ids("<ent>") in ids[1]
    assert max(ids[1]) < json.loads((saved / "config.json").read_text())["vocab_size"]
    if kind == "mluke":
        # transformers 5's MLukeTokenizer saved the word tokenizer without SentencePiece's normaliser (full-width
        # letters become unknown, numbered <s>'s 0): restored (and logged), the ids are the SentencePiece model's own
        # (fairseq's offset: piece i is i + 1, its <unk> 0 is 3), as the released files give them.
        pieces = sentencepiece.SentencePieceProcessor(model_file=str(released / "sentencepiece.bpe.model"))
        line = "Ｔｏｋｙｏ（東京）は１９４５年  Denver"
        expected = [0] + [i + 1 if i else 3 for i in pieces.encode(line)] + [2]
        assert words[0](line)["input_ids"] == words[1](line)["input_ids"] == expected
        assert transformers.MLukeTokenizer.from_pretrained(str(saved))(line)["input_ids"] != expected
        caplog.clear()
        with caplog.at_level("WARNING", logger="luke_allennlp.resources.tokenization"):
            load_fast_tokenizer.__wrapped__(str(released))
            assert "nmt_nfkc" not in caplog.text  # the released files keep SentencePiece's normaliser
            load_fast_tokenizer.__wrapped__(str(saved))
        assert f"{saved}: a tokenizer saved by transformers 5's MLukeTokenizer" in caplog.text

    vocabs = [checkpoint_entity_vocab(str(d)) for d in (released, saved)]
    assert vocabs[0].to_transformers_json() == vocabs[1].to_transformers_json()
    for other in (EntityVocab.from_file(saved), EntityVocab.from_file(saved / "tokenizer_config.json")):
        assert other.to_transformers_json() == vocabs[1].to_transformers_json()
    if kind == "mluke":
        assert vocabs[1]["Tokyo"] == vocabs[1].get("東京都", language="ja")  # language:title keys read as such
    assert special_entity_ids(str(saved), {"[PAD]": 0, "[MASK]": 2}) == special_entity_ids(
        str(released), {"[PAD]": 0, "[MASK]": 2}
    )
    tables = [
        LukeEmbedder(str(d), entity_vocab="task").luke.entity_embeddings.entity_embeddings.weight
        for d in (released, saved)
    ]
    assert torch.equal(tables[0], tables[1])


def test_the_corpus_builder_reads_both_layouts_and_the_bare_roberta_files(both_layouts, tmp_path):
    """A transformers 5 checkpoint is tokenizer and entity vocabulary (its directory) of the corpus; RoBERTa's
    vocab.json + merges.txt alone load as build-tiny-checkpoint reads them."""
    dump = write_crafted_dump(tmp_path / "crafted.xml")
    options = CorpusOptions(max_seq_length=64, unknown_entities="unk")
    rows = {}
    for name, directory in zip(("released", "saved"), both_layouts["luke"]):
        build_pretraining_corpus(dump, str(directory), directory, tmp_path / name, options)
        rows[name] = datasets.load_from_disk(str(tmp_path / name))["word_ids"]
    assert rows["released"] == rows["saved"] and len(rows["saved"]) == 3
    roberta = shared_data_dir() / "tokenizers" / "roberta-base"
    vocab, _ = build_entity_vocab(dump)
    vocab.save_jsonl(tmp_path / "vocab.jsonl")
    metadata = build_pretraining_corpus(dump, str(roberta), tmp_path / "vocab.jsonl", tmp_path / "bare", options)
    assert metadata["sequences"] == 3
    # the same ids as RoBERTa's tokenizer of the tiny checkpoints (a prefix space before every word)
    assert datasets.load_from_disk(str(tmp_path / "bare"))["word_ids"] == rows["saved"]


def test_a_folder_without_a_tokenizer_is_named_with_what_it_lacks(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n")
    with pytest.raises(ValueError, match=r"vocab\.json lacks RoBERTa's special tokens <s>, </s>, <pad>, <unk>, <mask>"):
        load_tokenizer(str(tmp_path))
    (tmp_path / "merges.txt").unlink()
    with pytest.raises(
        ValueError, match="is no tokenizer transformers can load \\(it holds vocab.json; .*needs tokenizer.json"
    ):
        load_tokenizer(str(tmp_path))


@pytest.mark.parametrize("kind", ["luke", "mluke"])
def test_build_tiny_checkpoint_takes_a_transformers5_tokenizer_and_entity_vocabulary(both_layouts, kind, tmp_path):
    released, saved = both_layouts[kind]
    out = write_tiny_checkpoint(tmp_path / "tiny", kind, tokenizer=saved, entity_vocab=saved)
    # the entity vocabulary of the saved directory (in its tokenizer_config.json), as the released files have it
    assert EntityVocab.from_file(out).to_transformers_json() == EntityVocab.from_file(released).to_transformers_json()
    words = [load_fast_tokenizer(str(d)) for d in (released, out)]
    text = "Peter visited Tokyo and 東京都 <ent> x".split()
    assert (
        words[0](text, is_split_into_words=True)["input_ids"] == words[1](text, is_split_into_words=True)["input_ids"]
    )
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == max(words[1].get_vocab().values()) + 1
    if kind == "mluke":  # transformers' MLukeTokenizer reads what it wrote
        assert transformers.MLukeTokenizer.from_pretrained(str(out)).entity_vocab["en:Tokyo"] == 3


@pytest.mark.slow  # ~30 s; the reader, embedder and export parts are checked in the default suite above
def test_a_config_trains_on_a_transformers5_checkpoint_and_exports(
    both_layouts, open_entity_slice, tmp_path, monkeypatch
):
    """MODEL_NAME = a directory transformers 5 saved: the reader's tokenizer, the embedder's task entities (the lite
    order's [MASK] row, not LUKE's default id 2), the archive, and export-luke of it."""
    saved = both_layouts["luke"][1]
    set_config_env(monkeypatch, saved, open_entity_slice)
    overrides = {"trainer.num_epochs": 1, "dataset_reader.max_seq_length": 64}
    model = train_model_from_file(
        str(REPO_ROOT / "configs/entity_typing/open_entity.jsonnet"),
        str(tmp_path / "run"),
        overrides=json.dumps(overrides),
    )
    assert model is not None and (tmp_path / "run" / "model.tar.gz").is_file()
    export_luke(str(tmp_path / "run" / "model.tar.gz"), str(tmp_path / "exported"))
    exported = transformers.LukeForEntityClassification.from_pretrained(str(tmp_path / "exported"))
    assert exported.config.id2label[0] in OPEN_ENTITY_TYPES


@pytest.mark.slow  # ~10 s; the import from tokenizer_config.json is checked in the default suite (Open Entity)
def test_a_relation_checkpoint_saved_by_transformers5_imports_with_its_mask2(tmp_path):
    """[MASK2] (the tail) found in tokenizer_config.json's entity vocabulary; logits equal transformers'."""
    from tests.commands.test_import_luke_task import HEAD, TAIL, TEXT, forward, model_of, transformers_inputs

    released = write_tiny_task_checkpoint(
        tmp_path / "released",
        "LukeForEntityPairClassification",
        ["no_relation", "per:city_of_residence"],
        task="entity_pair_classification",
        seed=3,
    )
    saved = resave_with_transformers(released, tmp_path / "saved")
    archive = load_archive(import_luke_task(str(saved), str(tmp_path / "imported")))
    ours, tensors = forward(archive, [archive.dataset_reader.text_to_instance(TEXT, HEAD, TAIL)])
    inputs = transformers_inputs(saved, "entity_pair_classification", TEXT, [HEAD, TAIL])
    assert tensors["word_ids"].tolist() == inputs["input_ids"].tolist()
    with torch.no_grad():
        theirs = model_of(saved, "LukeForEntityPairClassification")(**inputs).logits
    assert (ours["logits"] - theirs).abs().max() < TOLERANCE and theirs.abs().max() > 1e-2
    table = archive.model.embedder.luke.entity_embeddings.entity_embeddings.weight
    theirs_table = model_of(saved, "LukeForEntityPairClassification").luke.entity_embeddings.entity_embeddings.weight
    assert torch.equal(table[3], theirs_table[3]) and torch.equal(table[0], theirs_table[2])  # [TAIL], [PAD]
