import json
import re
import subprocess

from luke_allennlp.resources.entity_vocab import EntityVocab
from tests.conftest import ALLENNLP, REPO_ROOT
from tests.wikipedia.crafted import write_crafted_dump


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ALLENNLP), *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def test_build_entity_vocab_command(tmp_path):
    dump = write_crafted_dump(tmp_path / "crafted.xml.bz2")
    result = run(
        "build-entity-vocab",
        str(dump),
        str(tmp_path / "vocab.tsv"),
        "--vocab-size",
        "5",
        "--num-workers",
        "1",
        "--links-in",
        "page",
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "vocab.tsv").read_text() == "[PAD]\t0\n[UNK]\t0\n[MASK]\t0\nChina\t3\nCandle\t2\n"
    # A short table on the screen, the whole summary in a file beside the vocabulary (the infobox's link, counted
    # with --links-in page, is a fifth to a missing page)
    assert re.search(r"links to pages not in the dump +5\n", result.stdout) and "wrote 5 entities" in result.stdout
    summary = json.loads((tmp_path / "vocab.summary.json").read_text())
    assert summary["links_to_missing_pages"] == 5 and summary["links_in"] == "page"
    assert f"the full summary to {tmp_path / 'vocab.summary.json'}" in result.stdout
    assert list(EntityVocab.from_file(tmp_path / "vocab.tsv"))[3:] == ["China", "Candle"]


def test_bad_input_is_a_one_line_error(tmp_path, monkeypatch):
    # allennlp's own entry point, in this process (a subprocess costs seconds of start-up per case)
    from allennlp.commands import main

    (tmp_path / "notes.txt").write_text("just some notes\n")
    cases = [
        (
            ["build-entity-vocab", str(tmp_path / "notes.txt"), str(tmp_path / "v.jsonl")],
            f"{tmp_path / 'notes.txt'}: not a MediaWiki XML export",
        ),
        (
            ["build-entity-vocab", str(tmp_path / "missing.xml"), str(tmp_path / "v.jsonl")],
            "missing.xml: no such dump file",
        ),
        (
            ["build-entity-vocab", str(tmp_path / "notes.txt"), str(tmp_path / "v.json")],
            "the output must end with .jsonl or .tsv",
        ),
        (
            ["build-entity-vocab", str(tmp_path / "notes.txt"), str(tmp_path / "notes.txt"), str(tmp_path / "v.tsv")],
            "a multilingual vocabulary is written as JSONL",
        ),
        (
            ["build-entity-vocab", str(tmp_path / "notes.txt"), str(tmp_path / "v.jsonl"), "--min-languages", "2"],
            "need two or more languages",
        ),
        (
            [
                "build-entity-vocab",
                str(tmp_path / "notes.txt"),
                str(tmp_path / "notes.txt"),
                str(tmp_path / "v.jsonl"),
                "--language",
                "en",
            ],
            "--language names 1 languages for 2 inputs",
        ),
        (
            [
                "build-pretraining-corpus",
                str(tmp_path / "notes.txt"),
                "tok",
                str(tmp_path / "notes.txt"),
                str(tmp_path),
            ],
            "exists and is not empty",
        ),
        (
            [
                "build-mention-dictionary",
                str(tmp_path / "notes.txt"),
                str(tmp_path / "m.json"),
                "--min-link-probability",
                "2",
            ],
            "min_link_probability must be in [0, 1]",
        ),
    ]
    for argv, message in cases:
        monkeypatch.setattr("sys.argv", ["allennlp", *argv, "--num-workers", "1"])
        try:
            main(prog="allennlp")
        except SystemExit as exit:
            assert message in str(exit.code) and str(exit.code).startswith(f"allennlp {argv[0]}: error: ")
        else:
            raise AssertionError(f"{argv} did not fail")
    assert not (tmp_path / "v.jsonl").exists()


def test_build_a_multilingual_entity_vocab_command(tmp_path):
    from tests.wikipedia.crafted import MULTILINGUAL_ENTITIES, write_multilingual_dumps

    dumps, wikidata = write_multilingual_dumps(tmp_path)
    out = tmp_path / "mluke_entity_vocab.jsonl"
    result = run(
        "build-entity-vocab",
        *map(str, dumps),
        str(out),
        "--interlanguage-links",
        str(wikidata),
        "--min-languages",
        "2",
        "--num-workers",
        "1",
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[:3] == [
        {"id": i, "entities": [[name, None]], "count": 0} for i, name in enumerate(["[PAD]", "[UNK]", "[MASK]"])
    ]
    assert lines[3:] == [
        {"id": 3 + i, "entities": [list(pair) for pair in pairs], "count": count}
        for i, (pairs, count) in enumerate(MULTILINGUAL_ENTITIES[:4])
    ]
    assert re.search(r"languages +en, de, ja\n", result.stdout) and re.search(r"merge conflicts.* +1\n", result.stdout)
    assert "wrote 7 ids" in result.stdout
    summary = json.loads((tmp_path / "mluke_entity_vocab.summary.json").read_text(encoding="utf-8"))
    assert summary["entities_below_min_languages"] == 2 and summary["merge"]["conflicts"] == 1
    mapping = EntityVocab.from_file(out).to_transformers_json()
    assert mapping["en:Tokyo"] == mapping["ja:東京都"] == mapping["de:Tokio"] == 3 and mapping["[MASK]"] == 2
