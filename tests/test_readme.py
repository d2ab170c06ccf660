"""
The README runs as written.

Every ```bash block of README.md is checked for what made it drift before (evaluations without `--output-file`,
files written outside `output/`, a pretraining corpus read from another path than the one built, a sample dump
without `--include-missing-pages`). The blocks marked `<!-- readme-test: NAME -->` (the line before the fence) are
run by bash (`set -euo pipefail`; a marked ```python block by Python) in a scratch directory that looks like the
checkout (`configs/`, `tests/`, `demo/`, `.allennlp_plugins`, and `../shared` beside it), a block's prerequisites
first. Hub names (`studio-ousia/luke-base`, `roberta-base`) are replaced by tiny random checkpoints built offline
(the LUKE one with an `entity_vocab.json`, as luke-base has);
files the README names as the user's downloads are stand-ins in the same formats (`train-v1.1.json`: two
paragraphs of SQuAD dev; `kbp37/*.txt`: the KBP37 fixture; `record/*.json`: the ReCoRD sample;
`enwiki-pages-articles.xml.bz2`: the 3-page sample dump). `smoke` and `pretraining-data` run exactly as written
(they are small already); the others get the small-run overrides the README documents merged into every
`allennlp train` / `evaluate` `-o` (`dataset_reader.max_instances` 16, one epoch, the CPU; pretraining: one
process, 2 batches of 8), and leave out two lines: `tensorboard` (the viewer is not installed; the test checks the
event files instead) and `python evaluate-v1.1.py` (the official script, not distributed here). A python block's
last line is printed as JSON for the test to check.

Each `allennlp` process spends ~15 s importing on a loaded 2-core machine, so the default suite runs:
- `ner` (NER: train on eng.train, evaluate eng.testb with --output-file and --predictions-output-file, print the
  F1, predict; 133 s on the loaded 2-core machine),
- `predictor` (Everyday use: `Predictor.from_path` in Python on the `ner` archive; 27 s);
and `make test-all` (marked slow) the rest:
- `smoke` (build-tiny-checkpoint, then the NER commands as `ner` runs them; ~100 s),
- `recover` (Everyday use: `--recover` of the `ner` run, a TensorBoard run),
- `kbp37` (relation classification: train, evaluate), `squad` (without and with entity inputs: titles, mention
  dictionary, train, evaluate, squad-predictions, predict), `record` (train, evaluate, squad-predictions, predict),
- `pretraining-data` (entity vocabulary and corpus from the real 206-page dump; ~50 s),
- `pretraining-training` (stage 1, stage 2, export-luke, NER fine-tuning from the export; after pretraining-data).
Not run: the install/lint/demo `make` lines, the generic `my_config.jsonnet` example, push-to-hf (needs the hub;
tests/commands test it against a mock), offline use's hub name from the cache, the entity-disambiguation block
(a full dump and AIDA files), import-luke-task (a hub model), export to transformers of a NER archive
(tests/commands test it), the GPU wheelhouse, and the trainer's GPU examples; the static checks above cover their
commands.
"""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

from tests.conftest import REPO_ROOT

MARKER = re.compile(r"<!--\s*readme-test:\s*([\w-]+)\s*-->")
# The marked blocks, in README order.
RUN = ["smoke", "recover", "predictor", "ner", "kbp37", "squad", "record", "pretraining-data", "pretraining-training"]
AS_WRITTEN = {"smoke", "pretraining-data"}  # run without the small-run overrides below: they are small already
HUB_NAMES = {"studio-ousia/luke-base": "luke", "roberta-base": "roberta"}
# The overrides the README documents for a small run, merged into every `allennlp train` / `evaluate` -o of the
# other blocks (a GPU's "trainer.cuda_device": 0 becomes the CPU's -1).
SMALL_TRAIN = {"dataset_reader.max_instances": 16, "trainer.num_epochs": 1, "trainer.cuda_device": -1}
SMALL_PRETRAINING = {"distributed": None, "trainer.num_gradient_accumulation_steps": 1, "data_loader.batch_size": 8,
                     "data_loader.batches_per_epoch": 2, "data_loader.num_workers": 0, "trainer.num_epochs": 1}  # fmt: skip
SMALL_EVALUATE = {"dataset_reader.max_instances": 16}
# Lines run by nothing here: a viewer that is not installed, a script the user downloads.
NOT_RUN = re.compile(r"^(tensorboard |python evaluate-v1\.1\.py )")


class Block(NamedTuple):
    line: int  # of the opening fence, 1-based
    name: Optional[str]  # the readme-test marker, if any
    code: str


def bash_blocks(text: str, language: str = "bash") -> List[Block]:
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].strip() == f"```{language}":
            start = i
            marker = MARKER.fullmatch(lines[i - 1].strip()) if i > 0 else None
            end = lines.index("```", i + 1)
            blocks.append(Block(start + 1, marker.group(1) if marker else None, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return blocks


def commands(code: str) -> List[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    result = []
    for line in joined.split("\n"):
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            result.append(line)
    return result


README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = bash_blocks(README)
PYTHON_BLOCKS = bash_blocks(README, "python")


def where(block: Block) -> str:
    return f"README.md:{block.line}"


def test_the_marked_blocks_are_the_ones_run():
    marked = sorted((b for b in BLOCKS + PYTHON_BLOCKS if b.name), key=lambda b: b.line)
    assert [b.name for b in marked] == RUN


def test_evaluations_write_their_metrics():
    """`allennlp evaluate` prints no final metrics: every example names the file it writes them to."""
    evaluations = [(b, c) for b in BLOCKS for c in commands(b.code) if "allennlp evaluate" in c]
    assert len(evaluations) >= 5
    for block, command in evaluations:
        assert "--output-file" in command, f"{where(block)}: {command}"


def test_commands_write_under_output():
    """Nothing the README runs writes into the repository's root: outputs go under output/ (git-ignored)."""
    written = 0
    for block in BLOCKS:
        for command in commands(block.code):
            words = shlex.split(command)
            for flag in ("-s", ">", "--output-file", "--predictions-output-file"):
                for i, word in enumerate(words[:-1]):
                    if word == flag:
                        written += 1
                        assert words[i + 1].startswith("output/"), f"{where(block)}: {flag} {words[i + 1]}"
    assert written >= 25


def test_pretraining_reads_the_corpus_that_was_built():
    built = set()
    for block in BLOCKS:
        for command in commands(block.code):
            words = shlex.split(command)
            if "build-pretraining-corpus" in words:  # (also inside a `for` loop: a dump's parts)
                built.add(words[words.index("build-pretraining-corpus") + 4])
    # (CORPUS may join several corpora with commas: mLUKE's, one per language)
    read = {p for b in BLOCKS for m in re.findall(r"\bCORPUS=(\S+)", b.code) for p in m.split(",")}
    assert "output/corpus" in built and all(path.startswith("output/") for path in built), built
    # CORPUS= (the pretraining configs) reads corpora the README builds
    assert "output/corpus" in read and read <= built


def test_sample_dumps_keep_missing_pages():
    """A sample dump links mostly to pages it lacks: without --include-missing-pages its vocabulary is 50 entities."""
    dump, checked = None, 0
    for block in BLOCKS:  # $DUMP as the README last set it, block after block
        for command in commands(block.code):
            assigned = re.match(r"DUMP=(\S+)$", command)
            dump = assigned.group(1) if assigned else dump
            if (
                re.search(r"allennlp build-(entity-vocab|mention-dictionary) \$DUMP", command)
                and "/shared/data/" in dump
            ):
                checked += 1
                assert "--include-missing-pages" in command, f"{where(block)}: {command}"
    assert checked == 2


@pytest.fixture(scope="module")
def scratch_checkout(tmp_path_factory, shared_data, squad_slice, kbp37_sample, record_sample) -> Path:
    root = tmp_path_factory.mktemp("readme")
    checkout = root / "repo"
    checkout.mkdir()
    for name in ("configs", "tests", "demo", ".allennlp_plugins"):
        (checkout / name).symlink_to(REPO_ROOT / name)
    (root / "shared").symlink_to(shared_data.parent)
    # What the blocks name as downloaded by the user (paths relative to the checkout), stood in for by slices
    # of the real files or the fixtures in the same formats.
    stand_ins = {
        "kbp37/train.txt": kbp37_sample, "kbp37/dev.txt": kbp37_sample, "kbp37/test.txt": kbp37_sample,
        "train-v1.1.json": squad_slice,
        "enwiki-pages-articles.xml.bz2": shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2",
        "record/train.json": record_sample, "record/dev.json": record_sample,
    }  # fmt: skip
    for name, target in stand_ins.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).symlink_to(target)
    return checkout


@pytest.fixture(scope="module")
def hub_stand_ins(tiny_luke_squad_dir, tiny_roberta_dir) -> Dict[str, str]:
    """A tiny LUKE with an entity_vocab.json (as luke-base has: SQuAD's entity inputs read it) and a tiny RoBERTa."""
    stand_ins = {"luke": tiny_luke_squad_dir, "roberta": tiny_roberta_dir}
    return {name: str(stand_ins[kind]) for name, kind in HUB_NAMES.items()}


def with_overrides(command: str, overrides: Dict[str, object]) -> str:
    """`command` with `overrides` merged into its `-o '{...}'` (added if it has none)."""
    existing = re.search(r" -o '(\{.*?\})'", command)
    if existing is None:
        return f"{command} -o '{json.dumps(overrides)}'"
    merged = {**json.loads(existing.group(1)), **overrides}
    return command[: existing.start()] + f" -o '{json.dumps(merged)}'" + command[existing.end() :]


def small(command: str) -> str:
    """A README command with the documented small-run overrides, if it trains or evaluates."""
    if re.search(r"\ballennlp train configs/pretraining/", command):
        return with_overrides(command, SMALL_PRETRAINING)
    if re.search(r"\ballennlp train ", command):
        return with_overrides(command, SMALL_TRAIN)
    if re.search(r"\ballennlp evaluate ", command):
        return with_overrides(command, SMALL_EVALUATE)
    return command


def script(block: Block, stand_ins: Dict[str, str]) -> str:
    """What is run for a block: its commands, hub names replaced by the tiny checkpoints and, but for the blocks
    run as written, the small-run overrides merged in and the NOT_RUN lines left out."""
    if block.name in AS_WRITTEN:
        code = block.code
    else:
        code = "\n".join(small(c) for c in commands(block.code) if not NOT_RUN.match(c))
    for hub_name, directory in stand_ins.items():
        code = re.sub(rf"(?<![\w/.-]){re.escape(hub_name)}(?![\w/.-])", directory, code)
    return code


class Readme:
    """Runs the marked blocks in the scratch checkout, each once, a block's prerequisites first."""

    NEEDS = {"recover": "ner", "predictor": "ner", "pretraining-training": "pretraining-data"}

    def __init__(self, checkout: Path, stand_ins: Dict[str, str]):
        self.checkout, self.stand_ins, self.outputs = checkout, stand_ins, {}

    def run(self, name: str) -> str:
        if name in self.outputs:
            return self.outputs[name]
        if name in self.NEEDS:
            self.run(self.NEEDS[name])
        (block,) = [b for b in BLOCKS + PYTHON_BLOCKS if b.name == name]
        code = script(block, self.stand_ins)
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        if block in PYTHON_BLOCKS:  # then prints, as JSON, what its last line (an expression) computes
            last = code.strip().splitlines()[-1]
            argv = [sys.executable, "-c", f"import json\n{code}\nprint(json.dumps({last}))"]
        else:
            argv = ["bash", "-euo", "pipefail", "-c", code]
        result = subprocess.run(argv, cwd=self.checkout, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{where(block)} ({name}) failed:\n{code}\n{result.stderr[-4000:]}"
        self.outputs[name] = result.stdout
        return result.stdout


@pytest.fixture(scope="module")
def readme(scratch_checkout, hub_stand_ins) -> Readme:
    return Readme(scratch_checkout, hub_stand_ins)


def test_small_run_overrides_are_merged():
    command = 'allennlp train configs/x.jsonnet -s output/x -o \'{"trainer.cuda_device": 0, "a": [1]}\''
    assert json.loads(shlex.split(small(command))[-1]) == {**SMALL_TRAIN, "a": [1]}
    assert json.loads(shlex.split(small("allennlp evaluate output/m.tar.gz f"))[-1]) == SMALL_EVALUATE
    assert small("allennlp predict output/m.tar.gz f") == "allennlp predict output/m.tar.gz f"


@pytest.mark.slow  # the ner block runs the same commands in the default suite
def test_smoke_block(readme):
    out = readme.run("smoke")
    smoke = readme.checkout / "output" / "smoke"
    metrics = json.loads((smoke / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"{metrics['f1']}" in out  # the figure the README shows
    config = json.loads((readme.checkout / "output" / "tiny-luke" / "config.json").read_text())
    assert config["model_type"] == "luke" and config["hidden_size"] == 32
    (prediction,) = [json.loads(line) for line in (smoke / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert len(prediction["tags"]) == 5


def test_ner_block(readme):
    out = readme.run("ner")
    ner = readme.checkout / "output" / "ner"
    metrics = json.loads((ner / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"{metrics['f1']}" in out
    predictions = [json.loads(line) for line in (ner / "test_predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == SMALL_EVALUATE["dataset_reader.max_instances"]
    first = predictions[0]  # eng.testb's first sentence, "SOCCER - JAPAN GET LUCKY WIN , ..."
    assert first["words"][:3] == ["SOCCER", "-", "JAPAN"] and first["gold_tags"][:4] == ["O", "O", "B-LOC", "O"]
    (prediction,) = [json.loads(line) for line in (ner / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."] and len(prediction["tags"]) == 5


def test_predictor_block(readme):
    """Predictor.from_path in Python, on the NER block's archive: the output fields the README shows."""
    out = readme.run("predictor")
    predictions = json.loads(out.strip().splitlines()[-1])  # the block's last line: predict_batch_json
    assert [p["words"] for p in predictions] == [[".", ".", "."], ["Tokyo", "rises", "."]]  # "..." splits in three
    for prediction in predictions:
        assert len(prediction["tags"]) == len(prediction["words"])
        for entity in prediction["entities"]:
            assert set(entity) == {"start", "end", "text", "type", "score"}
            assert entity["text"] == " ".join(prediction["words"][entity["start"] : entity["end"]])


@pytest.mark.slow
def test_recover_block(readme):
    readme.run("recover")
    output = readme.checkout / "output"
    assert (output / "ner" / "model.tar.gz").exists()
    for split in ("train", "validation"):
        assert any(f.name.startswith("events.out.tfevents") for f in (output / "ner-tb" / "log" / split).iterdir())


@pytest.mark.slow
def test_kbp37_block(readme):
    readme.run("kbp37")
    metrics = json.loads((readme.checkout / "output" / "kbp37" / "test_metrics.json").read_text())
    assert 0.0 <= metrics["macro_f1"] <= 1.0


@pytest.mark.slow
def test_squad_block(readme):
    out = readme.run("squad")
    squad = readme.checkout / "output" / "squad"
    metrics = json.loads((squad / "dev_metrics.json").read_text())
    assert 0.0 <= metrics["em"] <= metrics["f1"] <= 1.0
    lines = (squad / "dev_predictions.jsonl").read_text().splitlines()
    assert len(lines) == SMALL_EVALUATE["dataset_reader.max_instances"]
    official = json.loads((squad / "predictions.json").read_text())
    assert set(official) == {json.loads(line)["id"] for line in lines}
    assert "exact_match" in out  # squad-predictions --dataset prints the official scores
    (prediction,) = [json.loads(line) for line in (squad / "predictions.jsonl").read_text().splitlines()]
    assert set(prediction) >= {"answer", "start", "end", "score"}
    assert (readme.checkout / "output" / "squad_without_entities" / "model.tar.gz").exists()


@pytest.mark.slow
def test_record_block(readme):
    readme.run("record")
    record = readme.checkout / "output" / "record"
    metrics = json.loads((record / "dev_metrics.json").read_text())
    assert 0.0 <= metrics["em"] <= metrics["f1"] <= 1.0
    assert len(json.loads((record / "predictions.json").read_text())) == 2  # the sample's two queries
    (prediction,) = [json.loads(line) for line in (record / "predictions.jsonl").read_text().splitlines()]
    assert prediction["answer"] in ("Tian Tian", "China")


@pytest.mark.slow
def test_pretraining_data_block(readme):
    out = readme.run("pretraining-data")
    output = readme.checkout / "output"
    assert len((output / "entity_vocab.jsonl").read_text().splitlines()) == 16921  # the figures the README gives
    metadata = json.loads((output / "corpus" / "metadata.json").read_text())
    assert (metadata["pages"], metadata["sequences"], metadata["words"], metadata["entities"]) == (
        106,
        1249,
        591806,
        21745,
    )
    assert "num_rows: 1249" in out


@pytest.mark.slow
def test_pretraining_training_block(readme):
    """Stage 1, stage 2 (from the stage-1 archive), export-luke, and NER fine-tuning from the export."""
    readme.run("pretraining-training")
    output = readme.checkout / "output"
    exported = json.loads((output / "luke-pretrained" / "config.json").read_text())
    assert exported["architectures"] == ["LukeForMaskedLM"] and exported["hidden_size"] == 32
    entity_vocab = json.loads((output / "luke-pretrained" / "entity_vocab.json").read_text())
    assert len(entity_vocab) == 16921 + 1  # the corpus's entities and the export's [MASK2]
    assert (output / "ner-pretrained" / "model.tar.gz").exists()
