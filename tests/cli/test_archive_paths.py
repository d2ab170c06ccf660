"""What an archive's config names stays inside the archive (luke_allennlp/resources/archive_paths.py,
luke_allennlp/cli/archive_paths.py), archives nest boundedly and never in themselves, and an archive's config is JSON,
never Jsonnet (luke_allennlp/resources/archive_config.py): each refused in one line before anything is built."""

import json
import os
import re
import sys
import tarfile
import time

import pytest

from luke_allennlp.resources.archive_config import MAX_NESTING, ArchiveConfigError
from luke_allennlp.resources.archive_paths import TRUSTED_PATHS_VARIABLE, outside
from tests.crafted_archives import crafted

EMBEDDER = "model.text_field_embedder.token_embedders.tokens"
TINY = "bundled/0-tiny"  # the trained archive's bundled checkpoint


def outside_the_archive(tmp_path, trained):
    """Config entries that name something outside the archive: (where, value, what the refusal says)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    return {
        "from_archive_url": (
            "model",
            {"type": "from_archive", "archive_file": "http://127.0.0.1:9/model.tar.gz"},
            "'http://127.0.0.1:9/model.tar.gz' (at model.archive_file), a URL: loading an archive fetches nothing",
        ),
        "from_archive_itself": ("model", {"type": "from_archive", "archive_file": "SELF"}, "(at model.archive_file)"),
        "pretrained_module": (
            EMBEDDER,
            {"_pretrained": {"archive_file": str(trained), "module_path": "_text_field_embedder", "freeze": True}},
            f"(at {EMBEDDER}._pretrained.archive_file), outside the archive",
        ),
        "override_weights_file": (
            EMBEDDER,
            {"type": "pretrained_transformer", "model_name": "bundled/0-tiny", "override_weights_file": str(secret)},
            f"'{secret}' (at {EMBEDDER}.override_weights_file), outside the archive",
        ),
        "hub_url_weights": (
            f"{EMBEDDER}.config_overrides",
            {"weights": "hf://org/model/weights.th"},
            "a URL",
        ),
        "model_name_absolute": ("dataset_reader.tokenizer.model_name", str(tmp_path), "outside the archive"),
        "model_name_relative": (
            "dataset_reader.tokenizer.model_name",
            "secret-checkpoint",
            "'secret-checkpoint' (at dataset_reader.tokenizer.model_name), a path outside the archive (relative",
        ),
        "file_in_a_list": ("dataset_reader.segment_sentences", [str(secret)], "outside the archive"),
        "serialization_dir": ("model.serialization_dir", str(tmp_path / "made"), "outside the archive"),
        "relative_dir": ("model.serialization_dir", "runs/x", "a path outside the archive (relative"),
        "dotdot": (f"{EMBEDDER}.entity_vocab", "bundled/../../x.jsonl", "a path outside the archive"),
    }


def test_what_the_config_names_outside_the_archive_is_refused(trained_archive, tmp_path, monkeypatch):
    """Issue 38: `from_archive` naming an `http://` URL fetched it; naming the archive itself loaded it 88 times.
    Every file, directory or URL an archive's config names must be inside it: each refused in one line, nothing
    fetched, read or created. `LUKE_ARCHIVE_TRUSTED_PATHS` lets an archive one trusts name them."""
    from allennlp.models.archival import load_archive

    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret-checkpoint").mkdir()
    monkeypatch.delenv(TRUSTED_PATHS_VARIABLE, raising=False)
    started = time.monotonic()
    for name, (where, value, named) in outside_the_archive(tmp_path, trained_archive).items():
        archive = tmp_path / f"{name}.tar.gz"
        if isinstance(value, dict) and value.get("archive_file") == "SELF":
            value = {**value, "archive_file": str(archive)}
        crafted(trained_archive, archive, where, value, weights=False)
        with pytest.raises(ArchiveConfigError) as refused:
            load_archive(str(archive))
        message = str(refused.value)
        assert message.startswith(f"{archive}: its config names ") and named in message, (name, message)
        assert "everything an archive's config names must be inside the archive" in message and "\n" not in message
    assert time.monotonic() - started < 120  # (no connection tried: a refused port, but no retries either)
    assert not (tmp_path / "made").exists() and not (tmp_path / "runs").exists()

    # A manifest that points outside, at the archive itself.
    escaping = crafted(
        trained_archive,
        tmp_path / "manifest.tar.gz",
        manifest=lambda m: m["paths"].update({f"{EMBEDDER}.model_name": "../.."}),
        weights=False,
    )
    with pytest.raises(ArchiveConfigError, match=f"manifest.json points {EMBEDDER}.model_name at '../..', outside"):
        load_archive(str(escaping))

    # The opt-in: a path under a trusted directory passes the check (and is then read: no such checkpoint there).
    trusted = crafted(
        trained_archive, tmp_path / "trusted.tar.gz", f"{EMBEDDER}.model_name", str(tmp_path), weights=False
    )
    monkeypatch.setenv(TRUSTED_PATHS_VARIABLE, str(tmp_path))
    with pytest.raises(Exception) as read:
        load_archive(str(trusted))
    assert not isinstance(read.value, ArchiveConfigError)


@pytest.mark.parametrize(
    "key, value, refused",
    [
        ("model_name", "studio-ousia/luke-base", False),  # a hub name
        ("model_name", "roberta-base", False),
        ("entity_vocab", "checkpoint", False),  # a keyword of the `luke` embedder
        ("labels", "/person/artist", False),  # a label, naming nothing on disk
        ("vocab_namespace", "tokens", False),
        ("model_name", "org/../../x", True),
        ("model_name", "a/b/c", True),
        ("mention_dictionary", "/nonexistent/x.db", True),
        ("weights_file_path", "~/w.th", True),
        ("labels", "s3://bucket/x", True),
        ("labels", "/etc/hostname", True),  # (exists)
        ("labels", "/a\0b", False),
        ("archive_file", "/a\0b", True),
    ],
)
def test_which_values_name_something_outside(key, value, refused, tmp_path):
    assert (outside(value, key, str(tmp_path)) is not None) == refused


PLAIN_READER = {"type": "text_classification_json", "tokenizer": {"type": "whitespace"}}


def nested(trained, path, depth):
    """An archive whose model is `{"type": "from_archive"}` of its member `inner.tar.gz`, the next level down, `depth`
    levels deep (the last never reached: not an archive). Small: a whitespace tokenizer, no bundled checkpoint."""
    below = nested(trained, path.with_name(f"level{depth - 1}.tar.gz"), depth - 1) if depth > 1 else None
    return crafted(
        trained,
        path,
        "model",
        {"type": "from_archive", "archive_file": "inner.tar.gz"},
        edit=lambda config: config.update(dataset_reader=PLAIN_READER),
        manifest=lambda m: m.update(paths={"model.archive_file": "inner.tar.gz"}),
        members={"inner.tar.gz": below.read_bytes() if below is not None else b"never read"},
        drop=[f"{TINY}/{name}" for name in ("config.json", "tokenizer.json", "tokenizer_config.json")],
        weights=False,
    )


def test_archives_nest_boundedly_and_never_in_themselves(trained_archive, tmp_path, monkeypatch):
    """Issue 38: an archive naming itself was extracted 88 times (859 MB of temporary space for 6.8 MB), then a
    5,576-line traceback. Archives may nest `MAX_NESTING` deep (a gzip quine nests forever); an extracted archive
    (a directory) that names itself is refused as well."""
    from allennlp.models.archival import load_archive

    deepest = nested(trained_archive, tmp_path / "deep.tar.gz", MAX_NESTING + 2)
    with pytest.raises(ArchiveConfigError, match=f"^{re.escape(str(deepest))}: it nests archives more than 3 deep"):
        load_archive(str(deepest))
    assert MAX_NESTING == 3

    directory = tmp_path / "extracted"
    with tarfile.open(nested(trained_archive, tmp_path / "self.tar.gz", 1)) as tar:
        tar.extractall(directory, filter="data")
    config = json.loads((directory / "config.json").read_text())
    config["model"] = {"type": "from_archive", "archive_file": str(directory)}
    (directory / "config.json").write_text(json.dumps(config))
    (directory / "bundled" / "manifest.json").unlink()
    named = re.escape(f"{directory}: its config names '{directory}' (at model.archive_file), outside the archive")
    with pytest.raises(ArchiveConfigError, match=f"^{named}"):
        load_archive(str(directory))
    monkeypatch.setenv(TRUSTED_PATHS_VARIABLE, str(directory))  # trusted, it still does not load itself
    with pytest.raises(ArchiveConfigError, match=f"^{re.escape(str(directory))}: its config loads the archive"):
        load_archive(str(directory))


JSONNET = {
    "importstr": '{"dataset_reader": {"type": importstr "/etc/hostname"}}',
    "extvar": '{"model": {"type": std.extVar("LUKE_TEST_SECRET")}}',
    "exponential": "local f(n) = if n == 0 then 1 else f(n - 1) + f(n - 1); {model: {type: 'x', n: f(200)}}",
    "nested": '{"model": ' + "[" * 100_000 + "]" * 100_000 + "}",
}


def test_an_archive_config_is_json_never_jsonnet(trained_archive, tmp_path, monkeypatch, capsys):
    """Issue 38: `importstr` echoed a local file into the error, `std.extVar` a variable of the environment, an
    exponential function spun past SIGTERM, and deep nesting made a traceback. Each is refused at once in one line
    (through the `allennlp evaluate` command for one), saying that an archive's config is JSON."""
    from allennlp.commands import main
    from allennlp.models.archival import load_archive

    monkeypatch.setenv("LUKE_TEST_SECRET", "s3cr3t-token")
    hostname = open("/etc/hostname").read().strip() if os.path.exists("/etc/hostname") else "\0"
    for name, text in JSONNET.items():
        archive = crafted(trained_archive, tmp_path / f"{name}.tar.gz", config_text=text, weights=False)
        started = time.monotonic()
        with pytest.raises(ArchiveConfigError) as refused:
            load_archive(str(archive))
        assert time.monotonic() - started < 30
        message = str(refused.value)
        assert message.startswith(f"{archive}: its config.json "), message
        expected = "nests arrays and objects 100001 deep" if name == "nested" else "never evaluated as Jsonnet"
        assert expected in message and "s3cr3t" not in message and hostname not in message, message
    monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(tmp_path / "importstr.tar.gz"), "data.txt"])
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert error.startswith(f"allennlp: error: {tmp_path / 'importstr.tar.gz'}: its config.json is not JSON (line 1")
    assert error.count("\n") == 1


def test_cached_path_reads_nothing_outside_an_archive_while_it_loads(tmp_path):
    """The second line, for a parameter the check does not know: while an archive is built, allennlp's `cached_path`
    refuses a URL or a file outside it (outside a load, it reads anything, as allennlp's)."""
    from allennlp.common.file_utils import cached_path

    from luke_allennlp.resources.archive_config import loading_archive

    (tmp_path / "archive").mkdir()
    member, secret = tmp_path / "archive" / "labels.txt", tmp_path / "secret.txt"
    member.write_text("a\n")
    secret.write_text("secret\n")
    with loading_archive("model.tar.gz", tmp_path / "archive"):
        assert cached_path(str(member)) == str(member)
        with pytest.raises(ArchiveConfigError, match=r"^model.tar.gz: its config names 'http://127.0.0.1:9/x' \(at a"):
            cached_path("http://127.0.0.1:9/x")
        with pytest.raises(
            ArchiveConfigError, match=f"^model.tar.gz: its config names '{secret}' .*, outside the arch"
        ):
            cached_path(str(secret))
    assert cached_path(str(secret)) == str(secret)


def test_a_serialization_directory_refused_for_a_path_names_its_model_archive(tmp_path):
    """A training run's directory holds the config as written (paths outside it); its model.tar.gz bundles them: the
    refusal says to load that."""
    from luke_allennlp.resources.archive_paths import path_refusal

    run = tmp_path / "run"
    run.mkdir()
    message = path_refusal(str(run), "dataset_reader.model_name", "/data/tiny-luke", "outside the archive")
    assert "model.tar.gz" not in message
    (run / "model.tar.gz").write_bytes(b"")
    message = path_refusal(str(run), "dataset_reader.model_name", "/data/tiny-luke", "outside the archive")
    assert message.endswith(f"; {run / 'model.tar.gz'} bundles the files it names: load that")
