"""An archive's config names only registered components (luke_allennlp/resources/archive_config.py, luke_allennlp/cli/archive_types.py): a crafted `config.json`
whose `type` is an importable callable (`subprocess.Popen` with a `touch` command) runs nothing through any path that
loads an archive, and the refusal is one line naming the archive and the type."""

import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from luke_allennlp.resources.archive_config import TRUSTED_TYPES_VARIABLE, ArchiveConfigError, check_archive_config
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT
from tests.crafted_archives import crafted

DATA = FIXTURES / "data" / "sentiment.jsonl"


def popen(marker: Path) -> dict:
    return {"type": "subprocess.Popen", "args": ["touch", str(marker)]}


def ran(marker: Path, wait: float = 0.0) -> bool:
    """Whether the crafted command created its marker (waiting up to `wait` seconds for the child process)."""
    deadline = time.monotonic() + wait
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return marker.exists()


def attempt(load) -> None:
    """Runs a load that may fail after the crafted type ran (a Popen is no dataset reader)."""
    try:
        load()
    except Exception:  # noqa: BLE001
        pass


# Where a crafted entry goes (any depth, in a list, the vocabulary, the data loader, the trainer) and what is named.
def variants(marker: Path) -> dict:
    return {
        "dataset_reader": ("dataset_reader", popen(marker), "'subprocess.Popen' (at dataset_reader.type)"),
        "embedder": (
            "model.text_field_embedder.token_embedders.tokens",
            popen(marker),
            "(at model.text_field_embedder.token_embedders.tokens.type)",
        ),
        "encoder_os_system": (
            "model.seq2vec_encoder",
            {"type": "os.system", "command": f"touch {marker}"},
            "'os.system' (at model.seq2vec_encoder.type)",
        ),
        "validation_reader": (
            "validation_dataset_reader",
            {"type": "builtins.eval", "source": "1"},
            "'builtins.eval' (at validation_dataset_reader.type)",
        ),
        "vocabulary": (
            "vocabulary",
            {"type": "torch.hub.load", "repo_or_dir": "x/y", "model": "m"},
            "'torch.hub.load' (at vocabulary.type)",
        ),
        "data_loader": ("data_loader.batch_sampler", popen(marker), "(at data_loader.batch_sampler.type)"),
        "trainer_list": (
            "trainer.callbacks",
            [{"type": "tensorboard"}, popen(marker)],
            "(at trainer.callbacks.1.type)",
        ),
        "remote_code": (
            "model.text_field_embedder.token_embedders.tokens.transformer_kwargs",
            {"trust_remote_code": True},
            "sets trust_remote_code (at model.text_field_embedder",
        ),
    }


def test_a_crafted_config_runs_nothing_on_any_loading_path(trained_archive, tmp_path, monkeypatch):
    """The issue's archive through `load_archive`, a `from_archive` model, `Predictor.from_path`, `export-luke` and
    a stage-2 bundle of a `from_archive` model, the other crafted entries through `load_archive`: refused before
    anything is imported or built, the archive and the type named; nothing ran."""
    from allennlp.common import Params
    from allennlp.models import Model
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    from luke_allennlp.archival import bundle_config
    from luke_allennlp.archival.export_luke import export_luke

    monkeypatch.delenv(TRUSTED_TYPES_VARIABLE, raising=False)
    marker = tmp_path / "code-ran"
    for name, (where, value, named) in variants(marker).items():
        archive = crafted(trained_archive, tmp_path / f"{name}.tar.gz", where, value)
        loads = [partial(load_archive, str(archive))]
        if name == "dataset_reader":
            loads += [
                partial(Model.from_params, Params({"type": "from_archive", "archive_file": str(archive)})),
                partial(Predictor.from_path, str(archive)),
                partial(export_luke, str(archive), str(tmp_path / "exported")),
            ]
        if name == "embedder":  # (stage 2 of pretraining trains the model section of stage 1's archive)
            stage2 = {"model": {"type": "from_archive", "archive_file": str(archive)}}
            loads.append(partial(bundle_config, stage2, tmp_path / "stage2"))
        for load in loads:
            with pytest.raises(ArchiveConfigError) as refused:
                load()
            message = str(refused.value)
            assert message.startswith(f"{archive}: its config ") and named in message, message
            assert "\n" not in message
        assert not ran(marker), name
    assert not (tmp_path / "exported").exists()


def test_registered_names_and_opted_in_modules_load(trained_archive, tmp_path, monkeypatch):
    """What stays allowed: the trained archive itself, a registered class named by its module path, and (the
    opt-in) a module named by LUKE_ARCHIVE_TRUSTED_TYPES or loaded with --include-package."""
    from allennlp.commands import import_module_and_submodules
    from allennlp.models.archival import load_archive

    from luke_allennlp.resources import archive_config

    monkeypatch.delenv(TRUSTED_TYPES_VARIABLE, raising=False)
    assert type(load_archive(str(trained_archive)).model).__name__ == "BasicClassifier"
    by_path = crafted(
        trained_archive, tmp_path / "by-path.tar.gz", "model.type", "allennlp.models.basic_classifier.BasicClassifier"
    )
    assert type(load_archive(str(by_path)).model).__name__ == "BasicClassifier"

    marker = tmp_path / "code-ran"
    archive = crafted(trained_archive, tmp_path / "popen.tar.gz", "dataset_reader", popen(marker))
    monkeypatch.setenv(TRUSTED_TYPES_VARIABLE, "subprocess")
    attempt(lambda: load_archive(str(archive)))
    assert ran(marker, wait=10)
    marker.unlink()
    monkeypatch.setenv(TRUSTED_TYPES_VARIABLE, "subprocess.check_call")  # another name of the module: no
    with pytest.raises(ArchiveConfigError):
        load_archive(str(archive))
    monkeypatch.delenv(TRUSTED_TYPES_VARIABLE)
    monkeypatch.setattr(archive_config, "INCLUDED", set())
    import_module_and_submodules("subprocess")  # what `--include-package subprocess` calls
    attempt(lambda: load_archive(str(archive)))
    assert ran(marker, wait=10)


def test_resolve_class_name_refuses_while_an_archive_loads():
    """The second line of defence: whatever builds a component while an archive loads cannot import a dotted name
    that is not allowed; outside a load, allennlp's own behaviour (a user's config may name its classes)."""
    from allennlp.data import DatasetReader

    from luke_allennlp.resources.archive_config import loading_archive

    with loading_archive("some.tar.gz"), pytest.raises(ArchiveConfigError, match="^some.tar.gz: .*'json.JSONDecoder'"):
        DatasetReader.resolve_class_name("json.JSONDecoder")
    assert DatasetReader.resolve_class_name("json.JSONDecoder")[0].__name__ == "JSONDecoder"


def test_allennlp_predict_and_evaluate_refuse_the_crafted_archive(trained_archive, tmp_path, monkeypatch, capsys):
    """The user's path: `allennlp evaluate` (whose data loader comes from the archive; in this process) and the real
    `allennlp predict` command: one line naming the archive and the type, exit status 1, the marker never made."""
    from allennlp.commands import main

    marker = tmp_path / "code-ran"
    monkeypatch.delenv(TRUSTED_TYPES_VARIABLE, raising=False)
    loader = crafted(trained_archive, tmp_path / "loader.tar.gz", "data_loader.batch_sampler", popen(marker))
    monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(loader), str(DATA)])
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1
    assert capsys.readouterr().err.startswith(
        f"allennlp: error: {loader}: its config names the type 'subprocess.Popen'"
    )

    archive = crafted(trained_archive, tmp_path / "reader.tar.gz", "dataset_reader", popen(marker))
    assert predict_errors(archive) == [
        f"allennlp: error: {archive}: its config names the type 'subprocess.Popen' (at dataset_reader.type), not a "
        "registered component of allennlp or of the packages loaded: loading an archive imports and runs nothing "
        f"else (if you trust this archive: --include-package subprocess, or {TRUSTED_TYPES_VARIABLE}=subprocess)"
    ]
    assert not ran(marker, wait=1)


def predict_errors(archive, *args):
    """The lines but logging that the real `allennlp predict` of `archive` writes to stderr, which exits with 1."""
    env = {k: v for k, v in os.environ.items() if k != TRUSTED_TYPES_VARIABLE}
    result = subprocess.run(
        [str(ALLENNLP), "predict", str(archive), str(DATA), "--silent", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=600,
    )
    assert result.returncode == 1, result.stderr[-3000:]
    return [line for line in result.stderr.splitlines() if " - INFO - " not in line]


# The registered `tensorboard` callback (this project's, which replaced allennlp's registration: allennlp's class, the
# issue's, is no longer registered at all, and refused as such).
TENSORBOARD = "luke_allennlp.training.callbacks.tensorboard.TensorBoardCallback"
ALLENNLP_TENSORBOARD = "allennlp.training.callbacks.tensorboard.TensorBoardCallback"
SEQUENCE_TAGGING = "allennlp.data.dataset_readers.sequence_tagging.SequenceTaggingDatasetReader"
EMBEDDING = "allennlp.modules.token_embedders.embedding.Embedding"
EMBEDDER = "model.text_field_embedder.token_embedders.tokens"


# A registered class in another component's place (at any depth: a list, a dict of components, `Lazy`, a value
# passed on as it is), by module path or by registered name: (where, value, what the refusal says).
def out_of_place(events):
    return {
        "callback_as_reader": (
            "validation_dataset_reader",
            {"type": TENSORBOARD, "serialization_dir": str(events)},
            f"'{TENSORBOARD}' (at validation_dataset_reader.type), registered as a TrainerCallback, not a DatasetReader",
        ),
        "reader_as_embedder": (
            EMBEDDER,
            {"type": SEQUENCE_TAGGING},
            "registered as a DatasetReader, not a TokenEmbedder",
        ),
        "embedder_as_encoder": (
            "model.seq2vec_encoder",
            {"type": EMBEDDING, "embedding_dim": 32, "num_embeddings": 4},
            "(at model.seq2vec_encoder.type), registered as a TokenEmbedder, not a Seq2VecEncoder",
        ),
        "callback_as_indexer": (
            "dataset_reader.token_indexers.tokens",
            {"type": TENSORBOARD, "serialization_dir": str(events)},
            "(at dataset_reader.token_indexers.tokens.type), registered as a TrainerCallback, not a TokenIndexer",
        ),
        "reader_in_callbacks": (
            "trainer.callbacks",
            [{"type": "tensorboard"}, {"type": SEQUENCE_TAGGING}],
            "(at trainer.callbacks.1.type), registered as a DatasetReader, not a TrainerCallback",
        ),
        "indexer_as_vocabulary": (
            "vocabulary",
            {"type": "allennlp.data.token_indexers.single_id_token_indexer.SingleIdTokenIndexer"},
            "(at vocabulary.type), registered as a TokenIndexer, not a Vocabulary",
        ),
        "callback_name_as_loader_sampler": (
            "data_loader.batch_sampler",
            {"type": "tensorboard"},
            "'tensorboard' (at data_loader.batch_sampler.type), not a BatchSampler (it is registered as a TrainerCallback)",
        ),
        "callback_in_a_plain_dict": (
            f"{EMBEDDER}.config_overrides",
            {"x": {"type": TENSORBOARD, "serialization_dir": str(events)}},
            f"(at {EMBEDDER}.config_overrides.x.type), registered as a TrainerCallback, not a value passed on as it is",
        ),
    }


def test_a_registered_class_is_built_only_in_its_place(trained_archive, tmp_path, monkeypatch):
    """Issue 38: an archive whose `validation_dataset_reader` is allennlp's TensorBoardCallback with a
    `serialization_dir` of its choosing created that directory under `predict`. Each registered class out of its
    place is refused in one line before anything is built; a class in its place by module path still loads."""
    from allennlp.models.archival import load_archive

    monkeypatch.delenv(TRUSTED_TYPES_VARIABLE, raising=False)
    events = tmp_path / "events"
    for name, (where, value, named) in out_of_place(events).items():
        archive = crafted(trained_archive, tmp_path / f"{name}.tar.gz", where, value, weights=False)
        with pytest.raises(ArchiveConfigError) as refused:
            load_archive(str(archive))
        message = str(refused.value)
        assert message.startswith(f"{archive}: its config names the type ") and named in message, (name, message)
        assert "\n" not in message
    unregistered = crafted(
        trained_archive,
        tmp_path / "allennlp_callback_as_reader.tar.gz",
        "validation_dataset_reader",
        {"type": ALLENNLP_TENSORBOARD, "serialization_dir": str(events)},
        weights=False,
    )
    with pytest.raises(ArchiveConfigError, match=f"'{ALLENNLP_TENSORBOARD}' .*not a registered component"):
        load_archive(str(unregistered))
    assert not events.exists()
    in_place = crafted(trained_archive, tmp_path / "in-place.tar.gz", "trainer.callbacks", [{"type": TENSORBOARD}])
    assert type(load_archive(str(in_place)).model).__name__ == "BasicClassifier"  # (the trainer is not built)
    config = {"validation_dataset_reader": {"type": TENSORBOARD}}
    with pytest.raises(ArchiveConfigError):
        check_archive_config(config, "a.tar.gz")
    monkeypatch.setenv(TRUSTED_TYPES_VARIABLE, TENSORBOARD)  # the opt-in, for a class the user trusts there
    check_archive_config(config, "a.tar.gz")


def test_resolve_class_name_builds_a_class_only_as_what_it_is_registered():
    """The second line, while an archive loads: a registered class is built only as its own base class."""
    from allennlp.data import DatasetReader
    from allennlp.training.callbacks import TrainerCallback

    from luke_allennlp.resources.archive_config import loading_archive

    with loading_archive("some.tar.gz"):
        with pytest.raises(ArchiveConfigError, match=f"^some.tar.gz: .*'{TENSORBOARD}'.* not a DatasetReader"):
            DatasetReader.resolve_class_name(TENSORBOARD)
        assert TrainerCallback.resolve_class_name(TENSORBOARD)[0].__name__ == "TensorBoardCallback"


def test_allennlp_predict_builds_no_callback_as_a_reader(trained_archive, tmp_path):
    """The issue's case through the real `allennlp predict`: one line, exit status 1, no event files written."""
    events = tmp_path / "events"
    archive = crafted(
        trained_archive,
        tmp_path / "tensorboard.tar.gz",
        "validation_dataset_reader",
        {"type": TENSORBOARD, "serialization_dir": str(events)},
    )
    assert predict_errors(archive, "--use-dataset-reader") == [
        f"allennlp: error: {archive}: its config names the type '{TENSORBOARD}' (at validation_dataset_reader.type), "
        "registered as a TrainerCallback, not a DatasetReader: a component is built only from the classes registered "
        f"for its place: loading an archive imports and runs nothing else (if you trust this archive: "
        f"--include-package {TENSORBOARD.rpartition('.')[0]}, or {TRUSTED_TYPES_VARIABLE}={TENSORBOARD})"
    ]
    assert not events.exists()
