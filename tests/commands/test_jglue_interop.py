"""
Interop of the sentence-level heads with transformers, on the real JGLUE files and a tiny checkpoint in
`studio-ousia/luke-japanese-base-lite`'s layout: `allennlp import-luke-task` turns `LukeForSequenceClassification`
(classes, and `problem_type: "regression"`) and `LukeForMultipleChoice` checkpoints into archives whose evaluate
predictions equal transformers' probabilities / scores; `allennlp export-luke` writes the same classes from trained
archives, loadable with no missing or unexpected keys and giving the same logits.
"""

import json

import pytest
import torch
import transformers
from allennlp.commands.evaluate import evaluate_from_archive
from allennlp.commands.train import train_model_from_file
from allennlp.data import Batch
from allennlp.models.archival import load_archive

from luke_allennlp.archival.export_luke import export_luke
from luke_allennlp.archival.import_luke_task import import_luke_task
from tests.conftest import REPO_ROOT, set_config_env
from tests.jglue import write_japanese_task_checkpoint, write_slice

TOLERANCE = 1e-5
JNLI = {0: "entailment", 1: "contradiction", 2: "neutral"}


def lines_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def predictions(archive_path, data, tmp_path, overrides=""):
    out = tmp_path / "predictions.jsonl"
    evaluate_from_archive(str(archive_path), str(data), predictions_output_file=str(out), cmd_overrides=overrides)
    return lines_of(out)


def sentencepiece_pair(sp, first: str, second: str) -> list:
    """`<s> first </s></s> second </s>` as transformers 4's MLukeTokenizer (the released checkpoints' tokenizer) encodes
    it: the checkpoint's SentencePiece model itself (its NFKC normalisation included), ids shifted by one as fairseq's
    dictionary, the unknown piece `<unk>` 3."""
    shift = lambda ids: [i + 1 if i else 3 for i in ids]  # noqa: E731
    return [0, *shift(sp.encode(first)), 2, 2, *shift(sp.encode(second)), 2]


@torch.no_grad()
def transformers_outputs(checkpoint, architecture, examples):
    """Logits of the transformers model on each example (a (sentence1, sentence2) pair, or a (question, choices)),
    its inputs made by the checkpoint's SentencePiece model (see `sentencepiece_pair`)."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(checkpoint / "sentencepiece.bpe.model"))
    model = getattr(transformers, architecture).from_pretrained(str(checkpoint)).eval()
    logits = []
    for first, second in examples:
        if architecture == "LukeForMultipleChoice":
            rows = [sentencepiece_pair(sp, first, choice) for choice in second]
            width = max(map(len, rows))
            ids = torch.tensor([row + [1] * (width - len(row)) for row in rows])
            mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in rows])
            logits.append(model(input_ids=ids[None], attention_mask=mask[None]).logits[0])
        else:
            logits.append(model(input_ids=torch.tensor([sentencepiece_pair(sp, first, second)])).logits[0])
    return torch.stack(logits)


@pytest.fixture(scope="module")
def lite_dir(request):
    return request.getfixturevalue("tiny_luke_japanese_lite_dir")


def test_sequence_classification_checkpoint_on_jnli(lite_dir, tmp_path):
    checkpoint = write_japanese_task_checkpoint(
        tmp_path / "jnli",
        lite_dir,
        "LukeForSequenceClassification",
        id2label=JNLI,
        label2id={v: k for k, v in JNLI.items()},
    )
    archive = import_luke_task(str(checkpoint), str(tmp_path / "imported"))  # the task from the config's architecture
    data = write_slice("jnli_valid", tmp_path, 60)
    rows = predictions(archive, data, tmp_path)
    theirs = transformers_outputs(
        checkpoint, "LukeForSequenceClassification", [(x["sentence1"], x["sentence2"]) for x in lines_of(data)]
    ).softmax(-1)
    ours = torch.tensor([[row["probabilities"][JNLI[i]] for i in range(3)] for row in rows])
    difference = (ours - theirs).abs().max().item()
    print(f"JNLI import: max |probability difference| {difference:.2e} over {len(rows)} pairs")
    assert difference < TOLERANCE and theirs.max() - theirs.min() > 0.05
    assert [r["label"] for r in rows] == [JNLI[i] for i in theirs.argmax(-1).tolist()]


def test_regression_checkpoint_on_jsts(lite_dir, tmp_path):
    checkpoint = write_japanese_task_checkpoint(
        tmp_path / "jsts", lite_dir, "LukeForSequenceClassification", num_labels=1, problem_type="regression", seed=1
    )
    archive = import_luke_task(str(checkpoint), str(tmp_path / "imported"), task="sequence-classification")
    assert load_archive(archive).model.regression
    data = write_slice("jsts_valid", tmp_path, 40)
    rows = predictions(archive, data, tmp_path)
    theirs = transformers_outputs(
        checkpoint, "LukeForSequenceClassification", [(x["sentence1"], x["sentence2"]) for x in lines_of(data)]
    )[:, 0]
    difference = (torch.tensor([r["score"] for r in rows]) - theirs).abs().max().item()
    print(f"JSTS import: max |score difference| {difference:.2e} over {len(rows)} pairs")
    assert difference < TOLERANCE and theirs.std() > 1e-3


def test_multiple_choice_checkpoint_on_jcommonsenseqa(lite_dir, tmp_path):
    checkpoint = write_japanese_task_checkpoint(tmp_path / "jcqa", lite_dir, "LukeForMultipleChoice", seed=2)
    archive = import_luke_task(str(checkpoint), str(tmp_path / "imported"))
    data = write_slice("jcommonsenseqa_valid", tmp_path, 24)
    examples = [(x["question"], [x[f"choice{i}"] for i in range(5)]) for x in lines_of(data)]
    theirs = transformers_outputs(checkpoint, "LukeForMultipleChoice", examples).softmax(-1)
    rows = predictions(archive, data, tmp_path)
    difference = (torch.tensor([r["probabilities"] for r in rows]) - theirs).abs().max().item()
    print(f"JCommonsenseQA import: max |probability difference| {difference:.2e} over {len(rows)} questions")
    assert difference < TOLERANCE and [r["label"] for r in rows] == theirs.argmax(-1).tolist()


def test_wrong_task_is_refused(lite_dir, tmp_path):
    checkpoint = write_japanese_task_checkpoint(tmp_path / "mc", lite_dir, "LukeForMultipleChoice")
    with pytest.raises(ValueError, match="is a LukeForMultipleChoice, not a LukeForSequenceClassification"):
        import_luke_task(str(checkpoint), str(tmp_path / "out"), task="sequence-classification")


@pytest.mark.parametrize(
    "config, key, architecture",
    [
        ("jsts", "jsts_train", "LukeForSequenceClassification"),
        # the same class as JSTS's with labels; slow (make test-all) to keep the default suite short
        pytest.param("jnli", "jnli_valid", "LukeForSequenceClassification", marks=pytest.mark.slow),
        ("jcommonsenseqa", "jcommonsenseqa_train", "LukeForMultipleChoice"),
    ],
)
def test_export_of_trained_archives(config, key, architecture, request, tmp_path, monkeypatch):
    data = write_slice(key, tmp_path, 16)
    set_config_env(monkeypatch, request.getfixturevalue("tiny_luke_japanese_dir"), data)
    overrides = {"trainer.num_epochs": 1, "data_loader.batch_sampler.batch_size": 8, "trainer.optimizer.lr": 1e-3}
    train_model_from_file(
        str(REPO_ROOT / "configs" / "jglue" / f"{config}.jsonnet"),
        str(tmp_path / "run"),
        overrides=json.dumps(overrides),
    )
    export_luke(str(tmp_path / "run" / "model.tar.gz"), str(tmp_path / "exported"))
    exported, info = getattr(transformers, architecture).from_pretrained(
        str(tmp_path / "exported"), output_loading_info=True
    )
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    if config == "jsts":
        assert exported.config.problem_type == "regression" and exported.config.num_labels == 1
    archive = load_archive(str(tmp_path / "run" / "model.tar.gz"))
    instances = list(archive.dataset_reader.read(str(data)))
    batch = Batch(instances)
    batch.index_instances(archive.model.vocab)
    with torch.no_grad():
        ours = archive.model.eval()(**batch.as_tensor_dict())["logits"]
    metadata = [i["metadata"] for i in instances]
    if architecture == "LukeForMultipleChoice":
        examples = [(m["question"], m["choices"]) for m in metadata]
    else:
        examples = [(m["sentence1"], m["sentence2"]) for m in metadata]
        if config != "jsts":
            labels = [archive.model.vocab.get_token_from_index(i, "labels") for i in range(ours.size(-1))]
            assert list(exported.config.id2label.values()) == labels
    theirs = transformers_outputs(tmp_path / "exported", architecture, examples)
    difference = (ours - theirs).abs().max().item()
    print(f"{config} export: max |logit difference| {difference:.2e}")
    assert difference < TOLERANCE
    # And back: the exported checkpoint imports to the same predictions.
    reimported = load_archive(import_luke_task(str(tmp_path / "exported"), str(tmp_path / "reimported")))
    batch = Batch([reimported.dataset_reader.text_to_instance(*examples[0])])
    batch.index_instances(reimported.model.vocab)
    with torch.no_grad():
        again = reimported.model.eval()(**batch.as_tensor_dict())["logits"][0]
    assert (again - ours[0]).abs().max().item() < TOLERANCE
