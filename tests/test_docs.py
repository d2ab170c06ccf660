"""
The documentation runs as written.

Every ```bash block of README.md and of the site's pages (docs/**/*.md; not docs/incoming/, text waiting to be merged)
is checked for what made it drift before (evaluations without `--output-file`, files written outside `output/`, a
pretraining corpus read from another path than the one built, a sample dump without `--include-missing-pages`), and
every page with shell blocks says first how to activate the environment. The blocks marked `<!-- docs-test: NAME -->`
(the line before the fence) are run by bash (`set -euo pipefail`; a marked ```python block by Python) in a scratch
directory that looks like the checkout (`configs/`, `tests/`, `demo/`, `.allennlp_plugins`, and `../shared` beside
it), a block's prerequisites first. Hub names (`studio-ousia/luke-base`, `roberta-base`) are replaced by tiny random
checkpoints built offline (the LUKE one with an `entity_vocab.json`, as luke-base has);
files the pages name as the user's downloads are stand-ins in the same formats (`train-v1.1.json`: two
paragraphs of SQuAD dev; `kbp37/*.txt`: the KBP37 fixture; `record/*.json`: the ReCoRD sample;
`enwiki-pages-articles.xml.bz2`: the 3-page sample dump). `smoke`, `pretraining-data` and `luke-japanese` run
exactly as written (they are small already); the others get the small-run overrides the docs give merged into every
`allennlp train` / `evaluate` `-o` (`dataset_reader.max_instances` 16, one epoch, the CPU; pretraining: one
process, 2 batches of 8), and leave out two lines: `tensorboard` (the viewer is not installed; the test checks the
event files instead) and `python evaluate-v1.1.py` (the official script, not distributed here). A python block's
last line is printed as JSON for the test to check. README's quick start is the smoke block's commands (checked).

Every marked block runs in the default suite (`make test`). What each costs, in CPU-seconds of its processes
(measured on the shared 2-core machine under a load of ~15, before the compat layer deferred allennlp's start-up
imports, which roughly halved each `allennlp` process's ~7 CPU-s of start-up; on a quiet machine, 2026-11-25: smoke
26 s, squad 30 s, pretraining-training 50 s with its prerequisite):
- `ner` (entity tasks, NER: train on eng.train, evaluate eng.testb with --output-file and --predictions-output-file,
  print the F1, predict; 41 CPU-s), `predictor` (`Predictor.from_path` in Python on the `ner` archive; 10),
  `ner-document` (`allennlp predict` of a sentence, a sentence in context and a raw-text document; ~7),
- `recover` (training: `--recover` of the `ner` run, a run with TensorBoard and its plot; 44), `ner-export` (checkpoints: export-luke
  of the `ner` archive, loaded by transformers; 15),
- `kbp37` (relation classification: train, evaluate; 19), `record` (ReCoRD: train, evaluate, squad-predictions,
  predict; 41),
- `luke-japanese` (checkpoints: a tiny LUKE-Japanese checkpoint from JGLUE's text and its lite version; 25),
  `jglue` (another, then JCommonsenseQA: train, evaluate; 36),
- `pretraining-data` (entity vocabulary and corpus from the real 206-page dump; 26),
- `smoke` (the quick start: build-tiny-checkpoint, then on 32 sentences the commands `ner` runs; 58),
- `squad` (without and with entity inputs: titles, mention dictionary, train, evaluate, squad-predictions, predict; 60),
- `pretraining-training` (stage 1, stage 2, export-luke, NER fine-tuning from the export; after pretraining-data; 64),
- `own-language` (dump to tokenizer, base model, vocabulary, corpus, both stages, export, NER, cloze on a Bulgarian
  dump: tests/test_own_language.py runs it with allennlp's entry point in its process, ~25 s).
README.md's main job and quick start are the `ner` and `smoke` blocks' commands (checked).
Not run, the static checks above covering their commands:
- the hub: the examples with released checkpoints (mLUKE NER on German, Spanish and Dutch, JGLUE with
  luke-japanese-base, import-luke-task of a released task model, offline use's hub name from the cache), `push-to-hf`
  and `hf upload` (tests/cli/test_push_to_hf.py runs push-to-hf against a mock hub); your-own-data's Hub datasets
  and the user's own files it names (tests/data_readers/test_dataset_sources.py runs train, evaluate and predict on
  Parquet and save_to_disk paths, tests/resources/test_hf_datasets.py a Hub dataset from the cache offline);
- a GPU: the trainer's `cuda_device` and bf16 examples, the wheelhouse for a GPU machine (`make wheelhouse-check`
  tries that route here);
- full dumps and data not shipped: a whole Wikipedia in parts (tests/wikipedia/test_parts.py and
  tests/commands/test_build_mention_dictionary.py run the recipe on the 206-page dump cut in parts), the multilingual
  entity vocabulary and mLUKE pretraining (tests/test_mluke_pipeline.py runs that path on tiny dumps), the SQuAD
  mention dictionary over `$DUMP`, entity disambiguation on a full dump and AIDA's files;
- several seeds and searches (`allennlp seeds`, `allennlp tune` on the Seeds and hyperparameter search and Reproducing
  the paper pages: five seeds or thirty trials of LUKE each; tests/commands/test_seeds.py and test_tune.py run both
  commands on a tiny config);
- the `make` lines (install, lint, test, docs, demo), `source .venv/bin/activate` (the suite runs in that environment)
  and the generic `my_config.jsonnet` example.
"""

import json
import os
import re
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

import pytest

from tests.conftest import REPO_ROOT

MARKER = re.compile(r"<!--\s*docs-test:\s*([\w-]+)\s*-->")
# The marked blocks (in README, then the docs pages in path order, as DOC_FILES lists them).
RUN = [
    "smoke",
    "ner",
    "predictor",
    "record",
    "squad",
    "ner-export",
    "jglue",
    "luke-japanese",
    "pretraining-data",
    "pretraining-training",
    "recover",
    "kbp37",
    "ner-document",
    "own-language",  # (run in-process by tests/test_own_language.py)
]
AS_WRITTEN = {"smoke", "pretraining-data", "luke-japanese"}  # run without the small-run overrides: small already
HUB_NAMES = {"studio-ousia/luke-base": "luke", "roberta-base": "roberta"}
# The overrides the docs give for a small run, merged into every `allennlp train` / `evaluate` -o of the
# other blocks (a GPU's "trainer.cuda_device": 0 becomes the CPU's -1).
SMALL_TRAIN = {"dataset_reader.max_instances": 16, "trainer.num_epochs": 1, "trainer.cuda_device": -1}
SMALL_PRETRAINING = {
    "distributed": None,
    "trainer.num_gradient_accumulation_steps": 1,
    "data_loader.batch_size": 8,
    "data_loader.batches_per_epoch": 2,
    "data_loader.num_workers": 0,
    "trainer.num_epochs": 1,
}
SMALL_EVALUATE = {"dataset_reader.max_instances": 16}
# Lines run by nothing here: a viewer that is not installed, a script the user downloads.
NOT_RUN = re.compile(r"^(tensorboard |python evaluate-v1\.1\.py )")
ACTIVATE = "source .venv/bin/activate"


class Block(NamedTuple):
    file: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    name: Optional[str]  # the docs-test marker, if any
    code: str


def bash_blocks(text: str, language: str = "bash", file: str = "README.md") -> List[Block]:
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].strip() == f"```{language}":
            start = i
            marker = MARKER.fullmatch(lines[i - 1].strip()) if i > 0 else None
            end = lines.index("```", i + 1)
            blocks.append(Block(file, start + 1, marker.group(1) if marker else None, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return blocks


def commands(code: str) -> List[str]:
    """The block's commands, continuation lines joined, comments dropped; a quoted string over several lines (a
    `python -c "..."`) stays in its command."""
    joined = re.sub(r"\\\n\s*", " ", code)
    result, pending = [], ""
    for line in joined.split("\n"):
        line = line.strip() if pending else re.sub(r"(^|\s)#.*$", "", line).strip()
        pending = f"{pending}\n{line}" if pending else line
        try:
            shlex.split(pending)
        except ValueError:  # a quotation still open
            continue
        if pending:
            result.append(pending)
        pending = ""
    assert not pending, f"an unclosed quotation: {pending}"
    return result


DOC_FILES = ["README.md"] + sorted(
    p.relative_to(REPO_ROOT).as_posix()
    for p in (REPO_ROOT / "docs").rglob("*.md")
    if "incoming" not in p.relative_to(REPO_ROOT / "docs").parts
)
TEXTS = {f: (REPO_ROOT / f).read_text(encoding="utf-8") for f in DOC_FILES}
BLOCKS = [b for f in DOC_FILES for b in bash_blocks(TEXTS[f], file=f)]
PYTHON_BLOCKS = [b for f in DOC_FILES for b in bash_blocks(TEXTS[f], "python", file=f)]


def where(block: Block) -> str:
    return f"{block.file}:{block.line}"


def test_the_marked_blocks_are_the_ones_run():
    # (getting-started's blocks are run by tests/test_getting_started.py)
    marked = [b.name for b in BLOCKS + PYTHON_BLOCKS if b.name and b.file != "docs/getting-started.md"]
    assert sorted(marked) == sorted(RUN), "a marked block without its test here, or a test whose block went"
    assert "readme-test" not in "".join(TEXTS.values()), "a block to run is marked <!-- docs-test: NAME -->"


def test_the_pages_are_the_site():
    """Every page is in mkdocs.yml's nav (mkdocs --strict checks the links), and the site has the pages README names."""
    nav = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [f.removeprefix("docs/") for f in DOC_FILES if f.startswith("docs/")]
    assert pages and all(f" {page}" in nav for page in pages), pages
    for link in re.findall(r"\]\((docs/[^)#]+)", TEXTS["README.md"]):
        assert link in DOC_FILES, link


def test_pages_say_how_to_activate_the_environment():
    """`allennlp` is the environment's: each file with shell blocks says how to activate it, before its first block
    or in it."""
    for file in DOC_FILES:
        blocks = [b for b in BLOCKS if b.file == file]
        if blocks:
            first = blocks[0]
            before = "\n".join(TEXTS[file].split("\n")[: first.line]) + first.code
            assert ACTIVATE in before, f"{file}: no `{ACTIVATE}` before its commands"


def test_readme_is_short_and_its_commands_are_run():
    """README.md stays a front page (the docs hold the rest); its main job is the ner block's commands and its quick
    start the smoke block's, so that the suite runs them."""
    assert len(TEXTS["README.md"].splitlines()) <= 150
    readme = [b for b in BLOCKS if b.file == "README.md" and "allennlp train" in b.code]
    assert len(readme) == 2
    for block, name in zip(readme, ("ner", "smoke")):
        (run,) = [b for b in BLOCKS if b.name == name]
        run_commands = {" ".join(c.split()) for c in commands(run.code)}
        for command in commands(block.code):
            assert " ".join(command.split()) in run_commands, f"{where(block)}: {command} (not in the {name} block)"


def test_a_newcomers_first_day_is_in_the_docs():
    """What a newcomer missed (issue 28): the offline pretraining route, a command for the shipped SemEval data, `-f`,
    serving the site for its search, code lines wrapped rather than cut, and how long the long blocks take."""
    pretraining = [b for b in BLOCKS if b.file == "docs/pretraining.md"]
    assert any("build-tiny-checkpoint" in b.code and "--kind roberta" in b.code for b in pretraining)
    assert any("../shared/data/semeval2010_task8/" in b.code and "allennlp train" in b.code for b in BLOCKS)
    assert "`-f` (`--force`)" in TEXTS["docs/training.md"]
    assert "mkdocs serve" in TEXTS["README.md"] and "mkdocs serve" in TEXTS["docs/index.md"]
    assert "white-space: pre-wrap" in (REPO_ROOT / "docs" / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    assert re.search(r"about \d+ minutes", TEXTS["docs/tasks/jglue.md"])
    assert re.search(r"\d+(\.\d+)? minutes to the corpus", TEXTS["docs/pretraining.md"])
    assert "~7 CPU-seconds" not in "".join(TEXTS.values())  # (the start-up measured 3.4)


def test_evaluations_write_their_metrics():
    """`allennlp evaluate` prints no final metrics: every example names the file it writes them to
    (`evaluate-cross-lingual`: the folder)."""
    evaluations = [(b, c) for b in BLOCKS for c in commands(b.code) if "allennlp evaluate" in c]
    assert len(evaluations) >= 5
    for block, command in evaluations:
        flag = "--output-dir" if "allennlp evaluate-cross-lingual" in command else "--output-file"
        assert flag in command, f"{where(block)}: {command}"


def test_commands_write_under_output():
    """Nothing the docs run writes into the repository's root: outputs go under output/ (git-ignored)."""
    written = 0
    for block in BLOCKS:
        for command in commands(block.code):
            words = shlex.split(command)
            for flag in ("-s", ">", "--output-file", "--predictions-output-file", "--output-dir"):
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
    # CORPUS= (the pretraining configs) reads corpora the docs build
    assert "output/corpus" in read and read <= built


def test_sample_dumps_keep_missing_pages():
    """A sample dump links mostly to pages it lacks: without --include-missing-pages its vocabulary is 50 entities."""
    dump, checked = None, 0
    for i, block in enumerate(BLOCKS):  # $DUMP as the page last set it, block after block
        if i == 0 or BLOCKS[i - 1].file != block.file:
            dump = ""
        for command in commands(block.code):
            assigned = re.match(r"DUMP=(\S+)$", command)
            dump = assigned.group(1) if assigned else dump
            if (
                re.search(r"allennlp build-(entity-vocab|mention-dictionary) \$DUMP", command)
                and "/shared/data/" in dump
            ):
                checked += 1
                assert "--include-missing-pages" in command, f"{where(block)}: {command}"
    assert checked == 5  # pretraining (and its offline route), and getting-started's entity disambiguation


@pytest.fixture(scope="module")
def scratch_checkout(tmp_path_factory, shared_data, squad_slice, kbp37_sample, record_sample) -> Path:
    root = tmp_path_factory.mktemp("docs")
    checkout = root / "repo"
    checkout.mkdir()
    for name in ("configs", "tests", "demo", ".allennlp_plugins"):
        (checkout / name).symlink_to(REPO_ROOT / name)
    (root / "shared").symlink_to(shared_data.parent)
    # What the blocks name as downloaded by the user (paths relative to the checkout), stood in for by slices
    # of the real files or the fixtures in the same formats.
    stand_ins = {
        "kbp37/train.txt": kbp37_sample,
        "kbp37/dev.txt": kbp37_sample,
        "kbp37/test.txt": kbp37_sample,
        "train-v1.1.json": squad_slice,
        "enwiki-pages-articles.xml.bz2": shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2",
        "record/train.json": record_sample,
        "record/dev.json": record_sample,
    }
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
    """A docs command with the documented small-run overrides, if it trains or evaluates."""
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


class Docs:
    """Runs the marked blocks in the scratch checkout, each once, a block's prerequisites first; prints what each
    took (wall and CPU seconds of its processes: `pytest -s` shows them)."""

    NEEDS = {
        "recover": "ner",
        "predictor": "ner",
        "ner-document": "ner",
        "ner-export": "ner",
        "pretraining-training": "pretraining-data",
    }

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
        wall, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        result = subprocess.run(argv, cwd=self.checkout, env=env, capture_output=True, text=True, timeout=600)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        print(f"docs block {name}: {time.perf_counter() - wall:.1f} s wall, {cpu_s:.1f} CPU-s")
        assert result.returncode == 0, f"{where(block)} ({name}) failed:\n{code}\n{result.stderr[-4000:]}"
        self.outputs[name] = result.stdout
        return result.stdout


@pytest.fixture(scope="module")
def docs(scratch_checkout, hub_stand_ins) -> Docs:
    return Docs(scratch_checkout, hub_stand_ins)


def test_small_run_overrides_are_merged():
    command = 'allennlp train configs/x.jsonnet -s output/x -o \'{"trainer.cuda_device": 0, "a": [1]}\''
    assert json.loads(shlex.split(small(command))[-1]) == {**SMALL_TRAIN, "a": [1]}
    assert json.loads(shlex.split(small("allennlp evaluate output/m.tar.gz f"))[-1]) == SMALL_EVALUATE
    assert small("allennlp predict output/m.tar.gz f") == "allennlp predict output/m.tar.gz f"


def test_smoke_block(docs):
    out = docs.run("smoke")
    smoke = docs.checkout / "output" / "smoke"
    metrics = json.loads((smoke / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"{metrics['f1']}" in out  # the figure the docs show
    config = json.loads((docs.checkout / "output" / "tiny-luke" / "config.json").read_text())
    assert config["model_type"] == "luke" and config["hidden_size"] == 32
    (prediction,) = [json.loads(line) for line in (smoke / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert len(prediction["tags"]) == 5


def test_ner_block(docs):
    out = docs.run("ner")
    ner = docs.checkout / "output" / "ner"
    metrics = json.loads((ner / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"{metrics['f1']}" in out
    predictions = [json.loads(line) for line in (ner / "test_predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == SMALL_EVALUATE["dataset_reader.max_instances"]
    first = predictions[0]  # eng.testb's first sentence, "SOCCER - JAPAN GET LUCKY WIN , ..."
    assert first["words"][:3] == ["SOCCER", "-", "JAPAN"] and first["gold_tags"][:4] == ["O", "O", "B-LOC", "O"]
    (prediction,) = [json.loads(line) for line in (ner / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."] and len(prediction["tags"]) == 5


def test_predictor_block(docs):
    """Predictor.from_path in Python, on the NER block's archive: the output fields the docs show."""
    out = docs.run("predictor")
    predictions = json.loads(out.strip().splitlines()[-1])  # the block's last line: predict_batch_json
    assert [p["words"] for p in predictions] == [[".", ".", "."], ["Tokyo", "rises", "."]]  # "..." splits in three
    for prediction in predictions:
        assert len(prediction["tags"]) == len(prediction["words"])
        for entity in prediction["entities"]:
            assert set(entity) == {"start", "end", "text", "type", "score"}
            assert entity["text"] == " ".join(prediction["words"][entity["start"] : entity["end"]])


def test_ner_document_block(docs):
    """A sentence alone, one with raw-text context, and a raw-text document: the outputs the page describes."""
    docs.run("ner-document")
    lines = (docs.checkout / "output" / "ner" / "document_predictions.jsonl").read_text().splitlines()
    alone, in_context, document = [json.loads(line) for line in lines]
    assert alone["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert in_context["words"][:3] == ["He", "met", "officials"] and len(in_context["tags"]) == 8
    sentences = document["sentences"]
    assert [s["words"][0] for s in sentences] == ["Peter", "He", "Germany"]  # split at ". " before a capital
    for prediction in [alone, in_context, *sentences]:
        for entity in prediction["entities"]:
            assert entity["text"] == " ".join(prediction["words"][entity["start"] : entity["end"]])


def test_recover_block(docs):
    docs.run("recover")
    output = docs.checkout / "output"
    assert (output / "ner" / "model.tar.gz").exists()
    for split in ("train", "validation"):
        assert any(f.name.startswith("events.out.tfevents") for f in (output / "ner-tb" / "log" / split).iterdir())
    (payload,) = re.findall(r'id="plot-data">(.*?)</script>', (output / "ner-tb.html").read_text(), re.S)
    (run,) = json.loads(payload)["runs"]
    steps = [step for step, _ in run["steps"]["train/batch_loss"]]  # (LUKE_TRACKING=tensorboard: every step)
    assert steps == list(range(1, len(steps) + 1)) and len(steps) >= 2
    assert "learning_rate/group_1" in run["steps"] and "validation_f1" in run["epochs"]


def test_kbp37_block(docs):
    docs.run("kbp37")
    metrics = json.loads((docs.checkout / "output" / "kbp37" / "test_metrics.json").read_text())
    assert 0.0 <= metrics["macro_f1"] <= 1.0


def test_squad_block(docs):
    out = docs.run("squad")
    squad = docs.checkout / "output" / "squad"
    metrics = json.loads((squad / "dev_metrics.json").read_text())
    assert 0.0 <= metrics["em"] <= metrics["f1"] <= 1.0
    lines = (squad / "dev_predictions.jsonl").read_text().splitlines()
    assert len(lines) == SMALL_EVALUATE["dataset_reader.max_instances"]
    official = json.loads((squad / "predictions.json").read_text())
    assert set(official) == {json.loads(line)["id"] for line in lines}
    assert "exact_match" in out  # squad-predictions --dataset prints the official scores
    (prediction,) = [json.loads(line) for line in (squad / "predictions.jsonl").read_text().splitlines()]
    assert set(prediction) >= {"answer", "start", "end", "score"}
    assert (docs.checkout / "output" / "squad_without_entities" / "model.tar.gz").exists()


def test_record_block(docs):
    docs.run("record")
    record = docs.checkout / "output" / "record"
    metrics = json.loads((record / "dev_metrics.json").read_text())
    assert 0.0 <= metrics["em"] <= metrics["f1"] <= 1.0
    assert len(json.loads((record / "predictions.json").read_text())) == 2  # the sample's two queries
    (prediction,) = [json.loads(line) for line in (record / "predictions.jsonl").read_text().splitlines()]
    assert prediction["answer"] in ("Tian Tian", "China")


def test_pretraining_data_block(docs):
    out = docs.run("pretraining-data")
    output = docs.checkout / "output"
    assert len((output / "entity_vocab.jsonl").read_text().splitlines()) == 16921  # the figures the docs give
    metadata = json.loads((output / "corpus" / "metadata.json").read_text())
    assert (metadata["pages"], metadata["sequences"], metadata["words"], metadata["entities"]) == (
        106,
        1249,
        591806,
        21745,
    )
    assert "num_rows: 1249" in out


def test_pretraining_training_block(docs):
    """Stage 1, stage 2 (from the stage-1 archive), export-luke, and NER fine-tuning from the export."""
    docs.run("pretraining-training")
    output = docs.checkout / "output"
    exported = json.loads((output / "luke-pretrained" / "config.json").read_text())
    assert exported["architectures"] == ["LukeForMaskedLM"] and exported["hidden_size"] == 32
    entity_vocab = json.loads((output / "luke-pretrained" / "entity_vocab.json").read_text())
    assert len(entity_vocab) == 16921 + 1  # the corpus's entities and the export's [MASK2]
    assert (output / "ner-pretrained" / "model.tar.gz").exists()


def test_ner_export_block(docs):
    """export-luke of the NER archive: a transformers LukeForEntitySpanClassification directory that loads."""
    docs.run("ner-export")
    config = json.loads((docs.checkout / "output" / "ner-transformers" / "config.json").read_text())
    assert config["architectures"] == ["LukeForEntitySpanClassification"] and "B-PER" not in config["id2label"].values()
    assert set(config["id2label"].values()) >= {"PER", "LOC", "ORG", "MISC"}


def test_luke_japanese_block(docs):
    docs.run("luke-japanese")
    output = docs.checkout / "output"
    entities = json.loads((output / "tiny-luke-japanese" / "entity_vocab.json").read_text())
    assert "ja:梅雨" in entities and max(entities, key=entities.get) == "[MASK2]"  # JSQuAD's titles, [MASK2] last
    lite = json.loads((output / "tiny-luke-japanese-lite" / "entity_vocab.json").read_text())
    assert lite == {"[MASK]": 0, "[UNK]": 1, "[PAD]": 2, "[MASK2]": 3}  # the lite layout the page gives


def test_jglue_block(docs):
    docs.run("jglue")
    metrics = json.loads((docs.checkout / "output" / "jglue" / "jcqa" / "valid_metrics.json").read_text())
    assert 0.0 <= metrics["accuracy"] <= 1.0
