import json

import pytest

from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from tests.commands.test_build_entity_vocab import run
from tests.wikipedia.crafted import write_crafted_dump


def test_build_mention_dictionary_command(tmp_path):
    dump = write_crafted_dump(tmp_path / "crafted.xml")
    (tmp_path / "squad.json").write_text(
        json.dumps({"version": "1.1", "data": [{"title": "Candle", "paragraphs": []}]})
    )
    out = tmp_path / "mentions.json"
    result = run(
        "build-mention-dictionary",
        str(dump),
        str(out),
        "--min-link-probability",
        "0.7",
        "--page-titles",
        str(tmp_path / "squad.json"),
        "--num-workers",
        "1",
    )
    assert result.returncode == 0, result.stderr
    dictionary = MentionDictionary.from_file(out)
    assert dictionary.min_link_probability == 0.7
    # "candle" and "wick" (2/3) fall below 0.7
    assert dictionary.pages == {"Candle": {"China": "China", "Rome": "Rome"}}
    assert dictionary.names_for_page("Candle") == {"China": "China", "Rome": "Rome"}
    assert "wrote 1 pages" in result.stdout


def test_outputs_go_into_folders_that_do_not_exist_yet(tmp_path, monkeypatch):
    """Both builders failed after all their work with "No such file or directory" (reading like a missing input)
    when the output's folder was missing: they create it first."""
    from allennlp.commands import main

    dump = write_crafted_dump(tmp_path / "crafted.xml")
    for command, output in [
        ("build-entity-vocab", "new/vocab/entities.tsv"),
        ("build-mention-dictionary", "new/m.json"),
    ]:
        monkeypatch.setattr("sys.argv", ["allennlp", command, str(dump), str(tmp_path / output), "--num-workers", "1"])
        main(prog="allennlp")
        assert (tmp_path / output).stat().st_size > 0
    assert MentionDictionary.from_file(tmp_path / "new" / "m.json").pages


def test_builds_over_dump_parts_through_the_commands(tmp_path_factory, tmp_path):
    """The pretraining page's recipe for a dump in parts, command by command (in process), gives the single run's files."""
    from luke_allennlp.resources.entity_vocab import EntityVocab
    from luke_allennlp.resources.mentions.store import MentionStore
    from tests.test_mluke_pipeline import allennlp
    from tests.wikipedia.test_parts import cut_dump

    whole, parts = cut_dump(tmp_path_factory, 40)
    common = ["--num-workers", "1", "--include-missing-pages"]
    for i, part in enumerate(parts):
        allennlp("build-entity-vocab", part, tmp_path / f"vocab{i}.sqlite", "--stage", "count", "--num-workers", "1")
        allennlp("build-mention-dictionary", part, tmp_path / f"links{i}.sqlite", "--stage", "links", *common)
    vocab_parts = [tmp_path / f"vocab{i}.sqlite" for i in range(3)]
    allennlp("build-entity-vocab", *vocab_parts, tmp_path / "merged.jsonl", "--stage", "merge", *common)
    out = allennlp("build-entity-vocab", *vocab_parts, tmp_path / "titles.sqlite", "--stage", "titles")
    assert "wrote the title index of 3 parts (" in out
    from luke_allennlp.wikipedia.parts import TitleIndex

    assert TitleIndex.is_index(tmp_path / "titles.sqlite") and not TitleIndex.is_index(vocab_parts[0])
    assert TitleIndex(tmp_path / "titles.sqlite").stats.redirects > 0
    allennlp(
        "build-mention-dictionary",
        *(tmp_path / f"links{i}.sqlite" for i in range(3)),
        tmp_path / "names.sqlite",
        "--stage",
        "names",
    )
    for i, part in enumerate(parts):
        allennlp(
            "build-mention-dictionary",
            part,
            tmp_path / f"occurrences{i}.sqlite",
            "--stage",
            "occurrences",
            "--names",
            tmp_path / "names.sqlite",
            "--num-workers",
            "1",
        )
    out = allennlp(
        "build-mention-dictionary",
        tmp_path / "names.sqlite",
        *(tmp_path / f"occurrences{i}.sqlite" for i in range(3)),
        tmp_path / "merged.sqlite",
        "--stage",
        "merge",
        *common,
    )
    assert "wrote" in out and "(stage merge)" in out
    allennlp("build-entity-vocab", whole, tmp_path / "single.jsonl", *common)
    allennlp("build-mention-dictionary", whole, tmp_path / "single.sqlite", *common)
    assert list(EntityVocab.from_file(tmp_path / "merged.jsonl")) == list(
        EntityVocab.from_file(tmp_path / "single.jsonl")
    )
    merged, single = (
        MentionDictionary.from_store(MentionStore(tmp_path / "merged.sqlite")),
        MentionStore(tmp_path / "single.sqlite"),
    )
    assert merged.pages == MentionDictionary.from_store(single).pages and merged.stats == single.stats
    with pytest.raises(SystemExit, match="--names is given with --stage occurrences, and only there"):
        allennlp("build-mention-dictionary", parts[0], tmp_path / "x.sqlite", "--stage", "occurrences")
    with pytest.raises(SystemExit, match="one dump, not 2: dump parts are built with --stage"):
        allennlp("build-mention-dictionary", parts[0], parts[1], tmp_path / "x.sqlite")
    with pytest.raises(SystemExit, match="a part file of kind 'entity-vocab-counts', not 'mention-links'"):
        allennlp("build-mention-dictionary", vocab_parts[0], tmp_path / "x.sqlite", "--stage", "names")
