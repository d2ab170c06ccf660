"""
The README runs as written.

Every ```bash block of README.md is checked for what made it drift before (evaluations without `--output-file`,
files written outside `output/`, a pretraining corpus read from another path than the one built, a sample dump
without `--include-missing-pages`). The blocks marked `<!-- readme-test: NAME -->` (the line before the fence) are
run, in that order, by bash (`set -euo pipefail`) in a scratch directory that looks like the checkout (`configs/`,
`tests/`, `demo/`, `.allennlp_plugins`, and `../shared` beside it). Hub names (`studio-ousia/luke-base`,
`roberta-base`) are replaced by tiny random checkpoints built offline; nothing else is changed. Two blocks are
marked, as each `allennlp` process spends 15 s importing on a loaded 2-core machine: `smoke` (build-tiny-checkpoint,
train, evaluate, predict: the shape of every task's commands; about 70 s, in the default suite) and
`pretraining-data` (entity vocabulary and corpus from the real 206-page dump; about 50 s, marked slow: `make
test-all`). The other blocks need downloads, full datasets or GPUs; the static checks above cover them.
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
RUN = ["smoke", "pretraining-data"]  # the marked blocks, in README order
HUB_NAMES = {"studio-ousia/luke-base": "luke", "roberta-base": "roberta"}


class Block(NamedTuple):
    line: int  # of the opening fence, 1-based
    name: Optional[str]  # the readme-test marker, if any
    code: str


def bash_blocks(text: str) -> List[Block]:
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
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


BLOCKS = bash_blocks((REPO_ROOT / "README.md").read_text(encoding="utf-8"))


def where(block: Block) -> str:
    return f"README.md:{block.line}"


def test_the_marked_blocks_are_the_ones_run():
    assert [b.name for b in BLOCKS if b.name] == RUN


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
    built = {shlex.split(c)[5] for b in BLOCKS for c in commands(b.code) if "allennlp build-pretraining-corpus" in c}
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
def scratch_checkout(tmp_path_factory, shared_data) -> Path:
    root = tmp_path_factory.mktemp("readme")
    checkout = root / "repo"
    checkout.mkdir()
    for name in ("configs", "tests", "demo", ".allennlp_plugins"):
        (checkout / name).symlink_to(REPO_ROOT / name)
    (root / "shared").symlink_to(shared_data.parent)
    return checkout


@pytest.fixture(scope="module")
def hub_stand_ins(tiny_luke_dir, tiny_roberta_dir) -> Dict[str, str]:
    return {name: str({"luke": tiny_luke_dir, "roberta": tiny_roberta_dir}[kind]) for name, kind in HUB_NAMES.items()}


def run_block(name: str, checkout: Path, stand_ins: Dict[str, str]) -> str:
    (block,) = [b for b in BLOCKS if b.name == name]
    code = block.code
    for hub_name, directory in stand_ins.items():
        code = re.sub(rf"(?<![\w/.-]){re.escape(hub_name)}(?![\w/.-])", directory, code)
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=checkout, env=env, capture_output=True,
                            text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, f"{where(block)} ({name}) failed:\n{code}\n{result.stderr[-4000:]}"
    return result.stdout


def test_smoke_block(scratch_checkout, hub_stand_ins):
    out = run_block("smoke", scratch_checkout, hub_stand_ins)
    smoke = scratch_checkout / "output" / "smoke"
    metrics = json.loads((smoke / "test_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0 and f"{metrics['f1']}" in out  # the figure the README shows
    config = json.loads((scratch_checkout / "output" / "tiny-luke" / "config.json").read_text())
    assert config["model_type"] == "luke" and config["hidden_size"] == 32
    (prediction,) = [json.loads(line) for line in (smoke / "predictions.jsonl").read_text().splitlines()]
    assert prediction["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert len(prediction["tags"]) == 5


@pytest.mark.slow
def test_pretraining_data_block(scratch_checkout, hub_stand_ins):
    out = run_block("pretraining-data", scratch_checkout, hub_stand_ins)
    output = scratch_checkout / "output"
    assert len((output / "entity_vocab.jsonl").read_text().splitlines()) == 16921  # the figures the README gives
    metadata = json.loads((output / "corpus" / "metadata.json").read_text())
    assert (metadata["pages"], metadata["sequences"], metadata["words"], metadata["entities"]) == (
        106,
        1249,
        591806,
        21745,
    )
    assert "num_rows: 1249" in out
