"""Self-contained archives (luke_allennlp.archival, compat repair 9): with the base checkpoint, the corpus, the
stage-1 archive and the working directory gone, an archive still predicts and exports."""

import json
import os
import shutil
import subprocess
import tarfile

import pytest
import torch
from allennlp.commands.train import train_model_from_file

from tests.conftest import ALLENNLP, REPO_ROOT
from tests.models.test_luke_pretraining import TINY as TINY_PRETRAINING

CONFIGS = REPO_ROOT / "configs"
TINY_FINE_TUNING = {
    "trainer.num_epochs": 1,
    "data_loader.batch_sampler.batch_size": 8,
    "dataset_reader.max_seq_length": 64,
}


def run_allennlp(*args, cwd):
    # From a directory without .allennlp_plugins: the archive must not need the repository either.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [str(ALLENNLP), *args, "--include-package", "data_readers"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, f"allennlp {args[0]} failed:\n{result.stderr[-4000:]}"
    return result


def test_fine_tuned_archive_predicts_without_its_base_checkpoint(tiny_luke_dir, semeval_slice, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(tiny_luke_dir, work / "base")
    shutil.copyfile(semeval_slice, work / "train.txt")
    monkeypatch.chdir(work)  # relative paths, as a user types them
    monkeypatch.setenv("MODEL_NAME", "base")
    monkeypatch.setenv("TRAIN_DATA_PATH", "train.txt")
    monkeypatch.setenv("VALIDATION_DATA_PATH", "train.txt")
    train_model_from_file(
        str(CONFIGS / "relation_classification" / "semeval.jsonnet"), "run", overrides=json.dumps(TINY_FINE_TUNING)
    )
    with tarfile.open("run/model.tar.gz") as archive:
        names = set(archive.getnames())
        config = json.load(archive.extractfile("config.json"))
    # The tokenizer and config are inside, not the base weights (the archive's own replace them).
    assert {"bundled/0-base/tokenizer.json", "bundled/0-base/config.json", "bundled/manifest.json"} <= names
    assert not any(name.endswith(".safetensors") for name in names)
    assert config["dataset_reader"]["model_name"] == config["model"]["embedder"]["model_name"] == "bundled/0-base"
    assert config["model"]["embedder"]["load_weights"] is False

    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"text": "The company fabricates plastic chairs.", "head": [4, 11], "tail": [31, 37]}\n')
    before = tmp_path / "before.jsonl"
    run_allennlp("predict", "run/model.tar.gz", str(inputs), "--output-file", str(before), "--silent", cwd=work)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move("run/model.tar.gz", elsewhere / "model.tar.gz")
    monkeypatch.chdir(tmp_path)
    shutil.rmtree(work)  # the base checkpoint, the data and the serialization directory
    after = tmp_path / "after.jsonl"
    run_allennlp(
        "predict", str(elsewhere / "model.tar.gz"), str(inputs), "--output-file", str(after), "--silent", cwd=elsewhere
    )
    prediction = json.loads(after.read_text())
    assert prediction == json.loads(before.read_text())  # the same model, the same answer
    assert abs(sum(prediction["probabilities"].values()) - 1.0) < 1e-5

    # An extracted archive (as `hf://` gives a pushed one) loads the same, from Python.
    from allennlp.predictors import Predictor

    extracted = tmp_path / "extracted"
    with tarfile.open(elsewhere / "model.tar.gz") as archive:
        archive.extractall(extracted, filter="data")
    predictor = Predictor.from_path(str(extracted), "luke_relation_classifier")
    assert predictor.predict_json(json.loads(inputs.read_text()))["label"] == prediction["label"]


def test_stage2_archive_exports_without_stage1_corpus_or_base(
    tiny_roberta_mlm_dir, pretraining_corpus, tmp_path, monkeypatch
):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(tiny_roberta_mlm_dir, work / "roberta")
    shutil.copytree(pretraining_corpus, work / "corpus")
    monkeypatch.chdir(work)
    monkeypatch.setenv("MODEL_NAME", "roberta")
    monkeypatch.setenv("CORPUS", "corpus")
    monkeypatch.setenv("STAGE1_ARCHIVE", "stage1/model.tar.gz")  # relative, as the README has it
    pretraining = CONFIGS / "pretraining"
    train_model_from_file(
        str(pretraining / "luke_base_stage1.jsonnet"), "stage1", overrides=json.dumps(TINY_PRETRAINING)
    )
    train_model_from_file(
        str(pretraining / "luke_base_stage2.jsonnet"), "stage2", overrides=json.dumps(TINY_PRETRAINING)
    )
    with tarfile.open("stage2/model.tar.gz") as archive:
        config = json.load(archive.extractfile("config.json"))
    # from_archive is replaced by stage 1's model, its checkpoint files and corpus skeleton bundled.
    assert config["model"]["type"] == "luke_pretraining" and config["model"]["load_weights"] is False
    assert config["model"]["model_name"].startswith("bundled/") and config["train_data_path"].startswith("bundled/")
    # stage 1's entity vocabulary (its corpus's skeleton, bundled in the stage-1 archive) too, not the temporary
    # directory stage 1's archive was extracted to while stage 2 was archived
    assert config["model"]["entity_vocab"].startswith("bundled/"), config["model"]["entity_vocab"]
    stage2_weights = torch.load("stage2/best.th", map_location="cpu", weights_only=True)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.move("stage2/model.tar.gz", elsewhere / "model.tar.gz")
    monkeypatch.chdir(tmp_path)
    shutil.rmtree(work)  # RoBERTa, the corpus, the stage-1 archive, the serialization directories
    # From the repository root, whose .allennlp_plugins names the subcommand's plugin.
    run_allennlp("export-luke", str(elsewhere / "model.tar.gz"), str(elsewhere / "luke"), cwd=REPO_ROOT)
    from safetensors.torch import load_file

    exported = load_file(str(elsewhere / "luke" / "model.safetensors"))
    key = "luke.entity_embeddings.entity_embeddings.weight"
    rows = stage2_weights["pretraining." + key].size(0)
    assert torch.equal(exported[key][:rows], stage2_weights["pretraining." + key])  # + [MASK2]
    assert (elsewhere / "luke" / "entity_vocab.json").is_file() and (elsewhere / "luke" / "vocab.json").is_file()


def test_an_interrupted_archiving_leaves_the_previous_archive(tmp_path, monkeypatch):
    """model.tar.gz is written under a temporary name and renamed: a crash while archiving (here on the vocabulary,
    after the weights) leaves the good archive of before, and no temporary file."""
    from luke_allennlp import archival

    run = tmp_path / "run"
    (run / "vocabulary").mkdir(parents=True)
    (run / "vocabulary" / "labels.txt").write_text("pos\nneg\n")
    (run / "config.json").write_text(json.dumps({"model": {"type": "basic_classifier"}}))
    (run / "best.th").write_bytes(b"first weights")
    archival.archive_model(run)
    good = (run / "model.tar.gz").read_bytes()
    (run / "best.th").write_bytes(os.urandom(1 << 20))
    add = tarfile.TarFile.add

    def crash_on_vocabulary(self, name, arcname=None, **kwargs):
        if arcname == "vocabulary":
            raise KeyboardInterrupt  # as a kill, after the new weights were half written
        return add(self, name, arcname=arcname, **kwargs)

    monkeypatch.setattr(tarfile.TarFile, "add", crash_on_vocabulary)
    with pytest.raises(KeyboardInterrupt):
        archival.archive_model(run)
    assert (run / "model.tar.gz").read_bytes() == good
    assert sorted(p.name for p in run.iterdir()) == ["best.th", "config.json", "model.tar.gz", "vocabulary"]
    monkeypatch.setattr(tarfile.TarFile, "add", add)
    archival.archive_model(run)
    with tarfile.open(run / "model.tar.gz") as tar:
        assert tar.extractfile("weights.th").read() == (run / "best.th").read_bytes()
