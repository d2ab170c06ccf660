import json

from luke_allennlp.wikipedia.mention_dictionary import MentionDictionary
from tests.commands.test_build_entity_vocab import run
from tests.wikipedia.crafted import write_crafted_dump


def test_build_mention_dictionary_command(tmp_path):
    dump = write_crafted_dump(tmp_path / "crafted.xml")
    (tmp_path / "squad.json").write_text(
        json.dumps({"version": "1.1", "data": [{"title": "Candle", "paragraphs": []}]})
    )
    out = tmp_path / "mentions.json"
    result = run("build-mention-dictionary", str(dump), str(out), "--min-link-probability", "0.7", "--page-titles",
                 str(tmp_path / "squad.json"), "--num-workers", "1")  # fmt: skip
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
