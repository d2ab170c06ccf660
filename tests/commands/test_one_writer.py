"""Two builders into one output (luke_allennlp.resources.output): while `allennlp build-entity-vocab` or
`build-pretraining-corpus` writes an output, a second builder into it is refused in one line naming the first's PID
and host, and the first's output comes out whole; a failed builder removes only its own temporary."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.testing import save_roberta_tokenizer
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from tests.conftest import ALLENNLP, REPO_ROOT


def wait_for(path: Path, process: subprocess.Popen, seconds: float = 120) -> None:
    """Waits until `path` exists (the builder holds its output's lock), or the builder has ended."""
    deadline = time.monotonic() + seconds
    while not path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def test_a_second_builder_into_a_live_output_is_refused(shared_data, tmp_path, monkeypatch):
    from allennlp.commands import main

    dump = shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    sample = shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2"
    save_roberta_tokenizer(tmp_path / "tokenizer")
    build_entity_vocab(sample)[0].save_jsonl(tmp_path / "sample-vocab.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    vocab, corpus = out / "vocab.jsonl", out / "corpus"
    commands = {
        vocab: ["build-entity-vocab", str(dump), str(vocab), "--num-workers", "1"],
        corpus: [
            "build-pretraining-corpus",
            str(dump),
            str(tmp_path / "tokenizer"),
            str(tmp_path / "sample-vocab.jsonl"),
            str(corpus),
            "--max-seq-length",
            "64",
            "--unknown-entities",
            "unk",
            "--max-pages",
            "30",
            "--num-workers",
            "1",
        ],
    }
    # The first builders: the real command, both at once (each a few seconds of work once it holds its lock).
    first = {
        output: subprocess.Popen(
            [str(ALLENNLP), *args], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for output, args in commands.items()
    }
    try:
        for output, args in commands.items():
            wait_for(Path(f"{output}.lock"), first[output])
            # The second, while the first works (in this process: no start-up, so it comes while the first builds).
            monkeypatch.setattr(sys, "argv", ["allennlp", *args])
            with pytest.raises(SystemExit) as exited:
                main(prog="allennlp")
            message = str(exited.value.code)
            assert message.startswith(
                f"allennlp {args[0]}: error: {output} is in use by another process (PID {first[output].pid} on host "
                f"{socket.gethostname()}, since "
            ), message
            assert "\n" not in message
        for process in first.values():
            _, stderr = process.communicate(timeout=300)
            assert process.returncode == 0, stderr[-3000:]
    finally:
        for process in first.values():
            process.kill()
    # The first builders' outputs, whole; nothing else left (no lock files, no temporaries).
    lines = vocab.read_text(encoding="utf-8").splitlines()
    assert (
        len(lines) == 50 and "\0" not in vocab.read_text(encoding="utf-8") and len(EntityVocab.from_file(vocab)) == 50
    )
    metadata = json.loads((corpus / "metadata.json").read_text())
    assert datasets.load_from_disk(str(corpus)).num_rows == metadata["sequences"] > 0
    assert sorted(os.listdir(out)) == ["corpus", "vocab.jsonl", "vocab.summary.json"]


def test_a_failed_builder_removes_only_its_own_work(tmp_path, monkeypatch):
    """A corpus build that fails (here: a tokenizer that does not exist) leaves the output directory as it was."""
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from tests.wikipedia.crafted import write_crafted_dump

    dump = write_crafted_dump(tmp_path / "crafted.xml")
    build_entity_vocab(dump)[0].save_jsonl(tmp_path / "vocab.jsonl")
    out = tmp_path / "corpus"
    out.mkdir()  # (an empty directory made beforehand stays)
    with pytest.raises((OSError, ValueError)):
        build_pretraining_corpus(dump, str(tmp_path / "no-tokenizer"), tmp_path / "vocab.jsonl", out)
    assert out.is_dir() and not any(out.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "crafted.xml", "vocab.jsonl"]
