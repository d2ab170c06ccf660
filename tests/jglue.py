"""JGLUE test data: the real files of ../shared/data/jglue (v1.3, as distributed) and slices of them, and the tiny
Japanese-capable checkpoint fixture the JGLUE tests use."""

import json
from pathlib import Path
from typing import Optional, Tuple

from luke_allennlp.testing import shared_data_dir

# The tiny checkpoint fixture (tests/conftest.py): studio-ousia/luke-japanese-base's layout, a SentencePiece model trained
# on JGLUE's training text.
JAPANESE_CHECKPOINT = "tiny_luke_japanese_dir"

FILES = {
    "jsts_train": "jsts-v1.3/train-v1.3.json",
    "jsts_valid": "jsts-v1.3/valid-v1.3.json",
    "jnli_valid": "jnli-v1.3/valid-v1.3.json",
    "jcommonsenseqa_train": "jcommonsenseqa-v1.3/train-v1.3.json",
    "jcommonsenseqa_valid": "jcommonsenseqa-v1.3/valid-v1.3.json",
    "jsquad_valid": "jsquad-v1.3/valid-v1.3.json",
}

# MARC-ja is no longer distributed: lines in the format JGLUE's preprocess/marc-ja/scripts/marc-ja.py writes
# (`json.dumps(dict(sentence=..., label=..., review_id=...), ensure_ascii=False)`), with reviews of our own.
MARC_JA_LINES = [
    {
        "sentence": "とても使いやすく、買ってよかったです。家族にも勧めました。",
        "label": "positive",
        "review_id": "R0000000000001",
    },
    {"sentence": "すぐに壊れてしまいました。二度と買いません。", "label": "negative", "review_id": "R0000000000002"},
    {"sentence": "音がきれいで、デザインも気に入っています。", "label": "positive", "review_id": "R0000000000003"},
    {
        "sentence": "説明書が分かりにくく、届いた時には傷がありました。",
        "label": "negative",
        "review_id": "R0000000000004",
    },
    {"sentence": "値段の割に品質が良いと思います。", "label": "positive", "review_id": "R0000000000005"},
    {"sentence": "サイズが合わず、返品の手続きも面倒でした。", "label": "negative", "review_id": "R0000000000006"},
    {"sentence": "期待以上の仕上がりで満足しています！", "label": "positive", "review_id": "R0000000000007"},
    {"sentence": "においがきつくて使えませんでした。", "label": "negative", "review_id": "R0000000000008"},
]


def jglue_file(key: str) -> Path:
    path = shared_data_dir() / "jglue" / FILES[key]
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the JGLUE v1.3 files of ../shared/data/jglue are missing")
    return path


def write_slice(key: str, directory: Path, lines: int, start: int = 0) -> Path:
    """Lines start..start+lines of a JSON-lines JGLUE file, as they are, written to `directory`."""
    text = jglue_file(key).read_text(encoding="utf-8").split("\n")[start : start + lines]
    path = Path(directory) / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def write_jsquad_slice(directory: Path, paragraphs: int = 3, article: int = 0) -> Path:
    """The first `paragraphs` paragraphs of one JSQuAD valid article, in the file's own format."""
    data = json.loads(jglue_file("jsquad_valid").read_text(encoding="utf-8"))
    chosen = data["data"][article]
    path = Path(directory) / "jsquad_slice.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"data": [{**chosen, "paragraphs": chosen["paragraphs"][:paragraphs]}]}, ensure_ascii=False),
        encoding="utf-8",
    )
    return path


def write_marc_ja(directory: Path, labelled: bool = True, name: Optional[str] = None) -> Path:
    path = Path(directory) / (name or ("marc_ja.json" if labelled else "marc_ja_test.json"))
    lines = [line if labelled else {k: v for k, v in line.items() if k != "label"} for line in MARC_JA_LINES]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def write_task_data(name: str, directory: Path) -> Tuple[Path, Path]:
    """(training file, validation file) for the config configs/jglue/`name`.jsonnet: slices of the real files
    (MARC-ja: lines of its format), written to `directory`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = name.replace("_entities", "")  # (jsts_entities reads JSTS)
    if name == "marc_ja":
        return write_marc_ja(directory), write_marc_ja(directory, name="marc_ja_valid.json")
    if name == "jnli":  # only the valid split is distributed: train on its first lines, validate on the next
        return write_slice("jnli_valid", directory / "train", 16), write_slice(
            "jnli_valid", directory / "valid", 24, 16
        )
    if name == "jsts":
        return write_slice("jsts_train", directory, 16), write_slice("jsts_valid", directory, 48)
    if name == "jcommonsenseqa":
        return write_slice("jcommonsenseqa_train", directory, 16), write_slice("jcommonsenseqa_valid", directory, 24)
    return write_jsquad_slice(directory / "train", 2, article=1), write_jsquad_slice(directory / "valid", 2)


def write_japanese_task_checkpoint(directory: Path, source: Path, architecture: str, seed: int = 0, **config) -> Path:
    """A tiny random transformers `architecture` (e.g. `LukeForSequenceClassification`) over the checkpoint `source`
    (its tokenizer and entity vocabulary files copied), saved as transformers saves a fine-tuned checkpoint. `config`
    sets e.g. `id2label` or `problem_type`; a larger `initializer_range` gives logits far from zero."""
    import shutil

    import torch
    import transformers

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for path in Path(source).iterdir():
        if path.name not in ("config.json", "model.safetensors"):
            shutil.copyfile(path, directory / path.name)
    torch.manual_seed(seed)
    luke_config = transformers.LukeConfig.from_pretrained(str(source), initializer_range=0.2, **config)
    getattr(transformers, architecture)(luke_config).save_pretrained(str(directory))
    return directory


# Entity inputs (the readers' mention_dictionary): names that occur in JSTS's and JCommonsenseQA's first lines, each
# linked to the entity of its own title; "トイレ"'s entity is left out of the entity vocabulary (a counted skip).
MENTION_NAMES = ["男性", "テニス", "ドーナツ", "サンドイッチ", "スキー", "トイレ", "絵本", "写真集"]


def write_mention_dictionary(directory: Path) -> tuple:
    """(a mention dictionary JSON, an entity vocabulary for it that fits the tiny checkpoint's entity table)."""
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    dictionary = MentionDictionary(
        pages={},
        link_probability=dict.fromkeys(MENTION_NAMES, 0.5),
        dump="handwritten",
        entities={name: [[name, 10]] for name in MENTION_NAMES},
    )
    dictionary.save(directory / "mentions.json")
    titles = ["[PAD]", "[UNK]", "[MASK]", *[name for name in MENTION_NAMES if name != "トイレ"]]
    (directory / "entity_vocab.json").write_text(json.dumps({t: i for i, t in enumerate(titles)}, ensure_ascii=False))
    return directory / "mentions.json", directory / "entity_vocab.json"
