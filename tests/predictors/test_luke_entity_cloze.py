"""
Entity cloze (mLAMA style) on a tiny mLUKE checkpoint with the masked entity head, against transformers'
LukeForMaskedLM on the same files; refused on one without the head; and with a `luke_pretraining` archive through
`allennlp predict`.
"""

import json
import shutil

import pytest
import torch
import transformers

from luke_allennlp.modeling import LukeForPretraining
from luke_allennlp.predictors import EntityCloze
from tests.test_mluke_pipeline import allennlp


@pytest.fixture(scope="module")
def tiny_mluke_with_head(tiny_mluke_dir, tmp_path_factory):
    """`tiny_mluke_dir` (MLukeTokenizer files, `language:title` entities, no heads) saved with both pretraining heads
    (random), as `LukeForMaskedLM`."""
    directory = tmp_path_factory.mktemp("tiny-mluke-head") / "model"
    shutil.copytree(tiny_mluke_dir, directory)
    torch.manual_seed(1)
    LukeForPretraining.from_pretrained(str(tiny_mluke_dir)).save_pretrained(str(directory))
    return directory


def test_a_checkpoint_without_the_head_is_refused_in_one_line(tiny_mluke_dir):
    with pytest.raises(ValueError, match=r"has no masked entity head \(entity_predictions\.\*\)") as error:
        EntityCloze.from_pretrained(str(tiny_mluke_dir))
    assert "\n" not in str(error.value)


def test_scores_are_transformers_masked_entity_logits_softmaxed_in_each_language(tiny_mluke_with_head):
    cloze = EntityCloze.from_pretrained(str(tiny_mluke_with_head))
    vocab = cloze.entity_vocab
    reference = transformers.LukeForMaskedLM.from_pretrained(str(tiny_mluke_with_head)).eval()
    tokenizer = cloze.tokenizer
    for sentence, language in [
        ("Dante was born in [MASK].", "en"),
        ("ダンテは[MASK]で生まれた。", "ja"),
        ("Angela Merkel lebt in [MASK].", "de"),
        ("Dante was born in [MASK].", None),
    ]:
        out = cloze.predict(sentence, language, top_k=50)
        ids = tokenizer(sentence.replace("[MASK]", tokenizer.mask_token))["input_ids"]
        position = ids.index(tokenizer.mask_token_id)
        with torch.no_grad():
            logits = reference(
                input_ids=torch.tensor([ids]),
                entity_ids=torch.tensor([[vocab["[MASK]"]]]),
                entity_position_ids=torch.tensor([[[position] + [-1] * 29]]),
                entity_attention_mask=torch.ones(1, 1),
            ).entity_logits[0, 0]
        # The entities ranked: every non-special one, or those with a title in the language.
        special = {vocab[name] for name in ("[PAD]", "[UNK]", "[MASK]", "[MASK2]")}
        ranked = [i for i in range(len(vocab)) if i not in special]
        if language is not None:
            ranked = [i for i in ranked if vocab.get(vocab.title(i, language=language), language=language) == i]
        expected = torch.softmax(logits[ranked], dim=-1)
        order = sorted(range(len(ranked)), key=lambda k: -float(expected[k]))
        assert [e["id"] for e in out["entities"]] == [ranked[k] for k in order]
        assert [e["score"] for e in out["entities"]] == pytest.approx([float(expected[k]) for k in order], abs=1e-5)
        for entity in out["entities"]:
            assert entity["entity"] == f"{entity['language']}:{entity['title']}"
            assert vocab.get(entity["title"], language=entity["language"]) == entity["id"]
            assert language is None or entity["language"] == language
    names = {e["entity"] for e in cloze.predict("Dante was born in [MASK].", "ja", top_k=5)["entities"]}
    assert names == {"ja:東京都", "ja:ベルリン"}  # the two entities of the vocabulary with Japanese titles

    for bad, message in [("Dante was born.", "must hold"), ("[MASK] and [MASK]", "must hold")]:
        with pytest.raises(ValueError, match=message):
            cloze.predict(bad)
    with pytest.raises(ValueError, match="no titles in 'fi'"):
        cloze.predict("Dante was born in [MASK].", "fi")


def test_allennlp_predict_with_a_pretraining_archive(tiny_roberta_mlm_dir, pretraining_corpus, tmp_path):
    """A `luke_pretraining` model (the configs' model on the test corpus, weights as initialised) archived as `allennlp
    train` archives it; `allennlp predict --predictor luke_entity_cloze` finds the corpus's tokenizer and entity
    vocabulary through the archive."""
    from allennlp.data import Vocabulary
    from allennlp.models.archival import archive_model

    from luke_allennlp.models.luke_pretraining import LukePretraining

    serialization = tmp_path / "run"
    serialization.mkdir()
    model_config = {
        "type": "luke_pretraining",
        "model_name": str(tiny_roberta_mlm_dir),
        "entity_vocab": str(pretraining_corpus),
    }
    config = {
        "dataset_reader": {"type": "luke_pretraining"},
        "train_data_path": str(pretraining_corpus),
        "vocabulary": {"type": "empty"},
        "model": model_config,
        "data_loader": {"batch_size": 2},
        "trainer": {"num_epochs": 1, "optimizer": "adam"},
    }
    (serialization / "config.json").write_text(json.dumps(config))
    model = LukePretraining(Vocabulary.empty(), **{k: v for k, v in model_config.items() if k != "type"})
    torch.save(model.state_dict(), serialization / "best.th")
    Vocabulary.empty().save_to_files(str(serialization / "vocabulary"))
    archive_model(str(serialization))
    inputs = tmp_path / "cloze.jsonl"
    inputs.write_text(json.dumps({"sentence": "EU rejects [MASK] call to boycott British lamb.", "top_k": 3}) + "\n")
    output = tmp_path / "out.jsonl"
    allennlp(
        "predict",
        serialization / "model.tar.gz",
        inputs,
        "--predictor",
        "luke_entity_cloze",
        "--output-file",
        output,
        "--silent",
    )
    predicted = json.loads(output.read_text())
    assert predicted["sentence"].startswith("EU rejects") and len(predicted["entities"]) == 3
    scores = [e["score"] for e in predicted["entities"]]
    assert scores == sorted(scores, reverse=True) and all(
        e["title"] not in ("[PAD]", "[MASK]") for e in predicted["entities"]
    )
