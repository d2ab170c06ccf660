"""`allennlp export-luke` through the real command: what it writes loads in transformers, in LukeEncoder and in
the fine-tuning configs, and computes what the archived model computes."""

import json
import os
import subprocess
import sys

import pytest
import torch
import transformers
from allennlp.commands.train import train_model_from_file
from allennlp.data import Batch
from allennlp.models.archival import load_archive

from luke_allennlp.modeling import LukeEncoder
from tests.cli.test_archives import (  # noqa: F401  (outside: a fixture)
    COMMAND_ATTACKS,
    crafted_archive,
    member,
    outside,
    write_tar,
    written_outside,
)
from tests.conftest import ALLENNLP, REPO_ROOT, set_config_env
from tests.models.test_luke_pretraining import CONFIG, TINY


def export(*args):
    return subprocess.run(
        [str(ALLENNLP), "export-luke", *map(str, args)], capture_output=True, text=True, cwd=REPO_ROOT, timeout=600
    )


@pytest.fixture(scope="module")
def archive(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("MODEL_NAME", str(tiny_roberta_mlm_dir))
        monkeypatch.setenv("CORPUS", str(pretraining_corpus))
        run = tmp_path_factory.mktemp("pretrained") / "run"
        train_model_from_file(str(CONFIG), str(run), overrides=json.dumps({**TINY, "trainer.optimizer.lr": 1e-2}))
    return run / "model.tar.gz"


@pytest.fixture(scope="module")
def exported(archive, tmp_path_factory):
    out = tmp_path_factory.mktemp("exported") / "luke"
    result = export(archive, out)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "LukeForMaskedLM with 50265 words and 61 entities" in result.stdout
    return out


def test_files_and_transformers_loading(exported):
    names = {p.name for p in exported.iterdir()}
    # What LukeTokenizer reads in transformers 4 (5 also writes tokenizer.json).
    assert {
        "config.json",
        "model.safetensors",
        "vocab.json",
        "merges.txt",
        "entity_vocab.json",
        "tokenizer_config.json",
    } <= names
    config = json.loads((exported / "config.json").read_text())
    assert config["architectures"] == ["LukeForMaskedLM"] and config["model_type"] == "luke"
    assert config["use_entity_aware_attention"] and config["entity_vocab_size"] == 61
    assert json.loads((exported / "tokenizer_config.json").read_text())["tokenizer_class"] == "LukeTokenizer"
    model, info = transformers.LukeForMaskedLM.from_pretrained(str(exported), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(exported))
    assert isinstance(tokenizer, transformers.LukeTokenizer)
    entities = json.loads((exported / "entity_vocab.json").read_text())
    assert (entities["[PAD]"], entities["[UNK]"], entities["[MASK]"], entities["[MASK2]"]) == (0, 1, 2, 60)
    encoding = tokenizer(
        "Germany beat Russia .", entities=["Germany", "[MASK]"], entity_spans=[(0, 7), (13, 19)], return_tensors="pt"
    )
    assert encoding["entity_ids"].tolist() == [[entities["Germany"], 2]]
    with torch.no_grad():
        out = model.eval()(**encoding)
    assert out.logits.shape[-1] == 50265 and out.entity_logits.shape[-1] == 61


def test_computes_what_the_archive_computes(archive, exported, pretraining_corpus):
    """On pretraining inputs the release (entity-aware queries copied from the plain query, new tokens and
    [MASK2] appended) gives the archived model's losses."""
    loaded = load_archive(str(archive))
    reader = loaded.dataset_reader
    reader.dynamic_masking = False
    assert reader.endless  # (the config's, for its data loader's workers: read here, one pass)
    batch = Batch(list(reader.read(str(pretraining_corpus)))[:4])
    batch.index_instances(loaded.model.vocab)
    tensors = batch.as_tensor_dict()
    released = transformers.LukeForMaskedLM.from_pretrained(str(exported)).eval()
    inputs = dict(
        input_ids=tensors["word_ids"],
        attention_mask=tensors["word_attention_mask"].long(),
        entity_ids=tensors["entity_ids"],
        entity_position_ids=tensors["entity_position_ids"],
        entity_attention_mask=tensors["entity_attention_mask"].long(),
    )
    labels, entity_labels = tensors["masked_lm_labels"], tensors["masked_entity_labels"]
    with torch.no_grad():
        ours = loaded.model.pretraining.eval()(**inputs, labels=labels, entity_labels=entity_labels)
        theirs = released(**inputs, labels=labels, entity_labels=entity_labels)
    assert abs(ours.masked_lm_loss.item() - theirs.mlm_loss.item()) < 1e-5
    masked = entity_labels.ne(-100)
    # The release's entity logits: the archive's, then [MASK2]'s (a copy of [MASK]'s).
    assert (ours.entity_logits - theirs.entity_logits[masked][:, :60]).abs().max() < 1e-4
    assert torch.equal(theirs.entity_logits[..., 60], theirs.entity_logits[..., 2])
    encoder = LukeEncoder.from_pretrained(str(exported))
    state = loaded.model.pretraining.luke.state_dict()
    layer = "encoder.layer.1.attention.self."
    assert torch.equal(encoder.state_dict()[layer + "e2e_query.weight"], state[layer + "query.weight"])
    word_table = encoder.embeddings.word_embeddings.weight
    tokenizer = transformers.LukeTokenizer.from_pretrained(str(exported))
    ent, at = tokenizer.convert_tokens_to_ids(["<ent>", "@"])
    assert torch.equal(word_table[ent], word_table[at])


def test_fine_tuning_config_trains_from_the_export(exported, conll_slice, tmp_path, monkeypatch):
    set_config_env(monkeypatch, exported, conll_slice)
    overrides = {
        "trainer.num_epochs": 1,
        "data_loader.batch_sampler.batch_size": 8,
        "dataset_reader.max_seq_length": 64,
    }
    train_model_from_file(
        str(REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet"), str(tmp_path / "ner"), overrides=json.dumps(overrides)
    )
    assert "validation_f1" in json.loads((tmp_path / "ner" / "metrics.json").read_text())


def test_pretrained_transformer_tokenizer_reads_the_export(exported):
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    from luke_allennlp.resources.tokenization import load_fast_tokenizer

    text = "Peter Blackburn visited Brussels ."
    tokens = PretrainedTransformerTokenizer(str(exported)).tokenize(text)  # LukeTokenizer, no prefix space
    assert [t.text_id for t in tokens] == transformers.RobertaTokenizerFast.from_pretrained(str(exported))(text)[
        "input_ids"
    ]
    fast = load_fast_tokenizer(str(exported))  # for pre-split words: a prefix space before each
    assert isinstance(fast, transformers.RobertaTokenizerFast)
    assert fast(text.split(), is_split_into_words=True)["input_ids"][1:3] == fast.convert_tokens_to_ids(
        ["ĠPeter", "ĠBlackburn"]
    )


def test_errors_name_the_problem(archive, tmp_path):
    from luke_allennlp.archival.export_luke import export_luke

    result = export(archive, tmp_path / "out", "--entity-vocab", REPO_ROOT / "nowhere.jsonl", "--tokenizer", tmp_path)
    assert result.returncode != 0 and "nowhere.jsonl" in result.stderr
    (tmp_path / "notes.txt").write_text("not an archive")
    with pytest.raises(ValueError, match="notes.txt is not a tar archive"):
        export_luke(str(tmp_path / "notes.txt"), str(tmp_path / "out"))
    write_tar(tmp_path / "no-config.tar.gz", [member("weights.th", b"x")])
    with pytest.raises(ValueError, match="no-config.tar.gz is not an allennlp model archive"):
        export_luke(str(tmp_path / "no-config.tar.gz"), str(tmp_path / "out"))


def test_crafted_and_corrupted_archives_are_refused(archive, outside, monkeypatch, capsys):  # noqa: F811  (the fixture)
    """Each attack of tests/cli/test_archives.py and a silently corrupted copy, through the command's
    entry point in this process, and one through the real command: an error naming the archive, nothing written
    outside the extraction directory, nothing exported."""
    from allennlp.commands import main

    for attack in COMMAND_ATTACKS:
        crafted = crafted_archive(archive, outside, attack)
        before = written_outside(outside)
        monkeypatch.setattr(sys, "argv", ["allennlp", "export-luke", str(crafted), str(outside / "tmp" / "out")])
        capsys.readouterr()
        with pytest.raises(SystemExit):  # one line (luke_allennlp.cli.user_errors)
            main(prog="allennlp")
        what = "corrupted" if attack == "corrupted" else "unsafe to extract"
        assert capsys.readouterr().err.startswith(f"allennlp: error: {crafted} is {what}")
        assert written_outside(outside) == before, attack
    assert not list((outside / "tmp").rglob("*.json")), "an extraction directory or an export was left behind"
    crafted = crafted_archive(archive, outside, "symlink")
    before = written_outside(outside)
    result = subprocess.run(
        [str(ALLENNLP), "export-luke", str(crafted), str(outside / "tmp" / "out")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=600,
        env={**os.environ, "TMPDIR": str(outside / "tmp")},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"allennlp: error: {crafted} is unsafe to extract: member 'link' is a symbolic link" in result.stderr, (
        result.stderr[-3000:]
    )
    assert written_outside(outside) == before and not list((outside / "tmp").rglob("*.json"))


def test_a_non_empty_output_directory_is_refused_unless_forced(tmp_path, monkeypatch, capsys):
    """`export-luke RUN/model.tar.gz RUN` overwrote the run's training config.json (then `--recover` refused): a
    non-empty directory, or a file, is refused before the archive is read, as `build-tiny-checkpoint` does; `--force`
    writes into it (here it goes on to read the missing archive)."""
    from allennlp.commands import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text('{"the": "training config"}')
    (tmp_path / "file").write_text("a file")
    cases = [
        ([run], f"{run} is not empty (config.json): export into a new directory, or pass --force to write into it"),
        ([tmp_path / "file"], f"{tmp_path / 'file'} is a file, not a directory: choose another output directory"),
        ([run, "--force"], f"[Errno 2] No such file or directory: '{tmp_path / 'missing.tar.gz'}'"),
    ]
    for args, message in cases:
        monkeypatch.setattr(sys, "argv", ["allennlp", "export-luke", str(tmp_path / "missing.tar.gz"), *map(str, args)])
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        err = capsys.readouterr().err
        assert exited.value.code == 1 and err.startswith(f"allennlp: error: {message}") and err.count("\n") == 1, err
    assert (run / "config.json").read_text() == '{"the": "training config"}'
