import json
import logging
import os
import signal
import socket
import sys

# Nothing in the suite may reach a hub: a missing local file must fail fast instead. Set before
# huggingface_hub is imported, since it reads these once.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Under pytest-xdist (`make test`: two workers on a 2-core machine), each worker and the commands it starts take their
# share of the cores: torch's default of a thread per core in every process oversubscribed the machine, and OpenMP's
# spinning threads then made the suite a third slower (tests/models, tests/modeling and the getting-started page on
# 2 cores: 314 s, against 212 s at one thread each). Set before torch is imported, since it reads them once.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT") and hasattr(os, "sched_getaffinity"):
    _threads = str(max(1, len(os.sched_getaffinity(0)) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    os.environ.setdefault("OMP_NUM_THREADS", _threads)
    os.environ.setdefault("MKL_NUM_THREADS", _threads)

import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

# The archives' extraction cache (`luke_allennlp.resources.archive_cache`) of this test process and the commands it
# starts: not the user's.
if "LUKE_ARCHIVE_CACHE" not in os.environ:
    os.environ["LUKE_ARCHIVE_CACHE"] = tempfile.mkdtemp(prefix="luke-test-archive-cache-")
    atexit.register(shutil.rmtree, os.environ["LUKE_ARCHIVE_CACHE"], True)

import pytest  # noqa: E402

import data_readers  # noqa: E402, F401  (registers the readers, and through luke_allennlp everything else)
from luke_allennlp.testing import shared_data_dir, write_tiny_checkpoint  # noqa: E402

# Ctrl-C as in a terminal, however the suite was started: a job started in the background by a shell without job
# control (`make test &` in a script, a CI runner) inherits SIGINT ignored, and so would every `allennlp` command
# the tests start (Python leaves an ignored SIGINT ignored), which the Ctrl-C tests would then not stop.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures"
ALLENNLP = Path(sys.executable).with_name("allennlp")  # the console command of this environment


# What a tiny (2-layer) LUKE classifier over entity states alone leaves without gradient: the pooler, and the
# last layer's word queries, which no entity state depends on.
UNUSED_BY_ENTITY_HEADS = {"embedder.luke.pooler.dense.weight", "embedder.luke.pooler.dense.bias"} | {
    f"embedder.luke.encoder.layer.1.attention.self.{q}.{p}" for q in ("query", "w2e_query") for p in ("weight", "bias")
}


# For allennlp's ModelTestCase, which compares a batch of two data loaders: the configs' `luke_bucket` sampler
# then yields the same batches (sorted by size, not shuffled).
SAME_BATCHES = {"data_loader.batch_sampler.shuffle": False}


# The modules that take longest (minutes of `allennlp` commands), run first: `make test` runs the suite in two
# processes, each taking the next module as it is free (`--dist loadscope`), and the longest going last would leave
# one process working alone at the end.
LONGEST_FIRST = [
    "tests/test_docs.py",
    "tests/test_getting_started.py",
    "tests/configs/test_pretraining_configs.py",
    "tests/configs/test_distributed_configs.py",
    "tests/training/test_multi_node.py",
    "tests/commands/test_export_luke_tasks.py",
    "tests/commands/test_export_luke.py",
    "tests/cli/test_commands.py",
    "tests/commands/test_tune.py",
    "tests/commands/test_seeds.py",
    "tests/test_archival.py",
    "tests/models/test_luke_squad.py",
]


def pytest_collection_modifyitems(session, config, items) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # (stable: the rest as collected)


def set_config_env(monkeypatch, model_dir: Path, data: Path) -> None:
    """The extVars of the configs in configs/: a checkpoint, and one file for training and validation."""
    monkeypatch.setenv("MODEL_NAME", str(model_dir))
    monkeypatch.setenv("TRAIN_DATA_PATH", str(data))
    monkeypatch.setenv("VALIDATION_DATA_PATH", str(data))


_handed_out = [0]  # ports handed out by this process


def free_port() -> int:
    """A port for a rendezvous the test names itself (several nodes, a launch built by hand; one node's `allennlp
    train` picks its own), not listened on now and handed out once: from a range of 100 of its own for each
    pytest-xdist worker, so that tests run side by side do not meet on a port, and below the ephemeral range, from
    which the system picks connections' own ports."""
    first = 20000 + 100 * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
    for _ in range(100):
        port = first + _handed_out[0] % 100
        _handed_out[0] += 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError(f"no free port in {first}-{first + 99}")


@pytest.fixture(autouse=True)
def _root_logging_as_it_was():
    """The root logger's handlers and level after each test as before it: an in-process `allennlp` command adds
    handlers on the streams pytest captured for that test, which later tests (in the same worker) would log to after
    pytest closed them."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(scope="session")
def trained_archive(tiny_luke_dir, tmp_path_factory) -> Path:
    """A tiny LUKE text classifier (`tests/fixtures/configs/luke_classifier.jsonnet`) trained for one epoch: its
    model.tar.gz, shared by the tests of archives (which copy it, never change it)."""
    from allennlp.commands.train import train_model_from_file

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("MODEL_DIR", str(tiny_luke_dir))
        monkeypatch.setenv("DATA", str(FIXTURES / "data" / "sentiment.jsonl"))
        out = tmp_path_factory.mktemp("classifier") / "run"
        train_model_from_file(
            str(FIXTURES / "configs" / "luke_classifier.jsonnet"),
            str(out),
            overrides=json.dumps({"trainer.num_epochs": 1}),
        )
    return out / "model.tar.gz"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return shared_data_dir()


@pytest.fixture(scope="session")
def tiny_luke_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-luke"), "luke")


@pytest.fixture(scope="session")
def tiny_classifier_archive(tiny_luke_dir, tmp_path_factory) -> Path:
    """The fixture classifier (`configs/luke_classifier.jsonnet` over the tiny LUKE, one epoch on
    `data/sentiment.jsonl`) trained in this process: its `model.tar.gz`."""
    from allennlp.commands.train import train_model_from_file

    out = tmp_path_factory.mktemp("classifier") / "run"
    saved = {name: os.environ.get(name) for name in ("MODEL_DIR", "DATA")}
    os.environ.update({"MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")})
    handlers = logging.getLogger().handlers[:]
    try:
        train_model_from_file(
            str(FIXTURES / "configs" / "luke_classifier.jsonnet"), str(out), overrides='{"trainer.num_epochs": 1}'
        )
    finally:
        logging.getLogger().handlers[:] = handlers
        for name, value in saved.items():
            os.environ.pop(name) if value is None else os.environ.update({name: value})
    return out / "model.tar.gz"


@pytest.fixture(scope="session")
def tiny_roberta_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-roberta"), "roberta")


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-bert"), "bert")


@pytest.fixture(scope="session")
def xlmr_tokenizer_dir(tmp_path_factory) -> Path:
    """A tiny XLM-R-style sentencepiece tokenizer (2000 pieces, fairseq ids) trained offline (`save_xlmr_tokenizer`)."""
    from luke_allennlp.testing import save_xlmr_tokenizer

    directory = tmp_path_factory.mktemp("xlmr-tokenizer")
    save_xlmr_tokenizer(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_mluke_dir(tmp_path_factory, xlmr_tokenizer_dir) -> Path:
    """A tiny random LUKE laid out as a released `studio-ousia/mluke-*` checkpoint over `xlmr_tokenizer_dir`
    (`MLukeTokenizer` files, `language:title` entity vocabulary of `MLUKE_SAMPLE_ENTITIES`)."""
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-mluke"), "mluke", tokenizer=xlmr_tokenizer_dir)


@pytest.fixture(scope="session")
def tiny_luke_japanese_dir(tmp_path_factory) -> Path:
    """A tiny random LUKE laid out as `studio-ousia/luke-japanese-base` (`luke_allennlp.fixtures.luke_japanese`): MLukeTokenizer
    files over a SentencePiece model (8,000 pieces) trained on JGLUE's training text, `ja:title` entities of JSQuAD's
    article titles (~4 s)."""
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-luke-japanese"), "luke-japanese")


@pytest.fixture(scope="session")
def tiny_luke_japanese_lite_dir(tmp_path_factory, tiny_luke_japanese_dir) -> Path:
    """`tiny_luke_japanese_dir`'s tokenizer laid out as `studio-ousia/luke-japanese-base-lite` (special entities only)."""
    directory = tmp_path_factory.mktemp("tiny-luke-japanese-lite")
    return write_tiny_checkpoint(directory, "luke-japanese-lite", tokenizer=tiny_luke_japanese_dir)


@pytest.fixture(scope="session")
def conll_slice(shared_data, tmp_path_factory) -> Path:
    """The first two documents of CoNLL-2003 eng.testa (29 sentences), written to a temporary file."""
    lines = (shared_data / "conll2003" / "eng.testa").read_text().split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("-DOCSTART-")]
    path = tmp_path_factory.mktemp("conll") / "slice.txt"
    path.write_text("\n".join(lines[: starts[2]]) + "\n")
    return path


@pytest.fixture(scope="session")
def open_entity_slice(shared_data, tmp_path_factory) -> Path:
    """The first 40 examples of Open Entity's train.json (paper format), written to a temporary file."""
    examples = json.loads((shared_data / "open_entity" / "train.json").read_text())[:40]
    path = tmp_path_factory.mktemp("open_entity") / "slice.json"
    path.write_text(json.dumps(examples))
    return path


@pytest.fixture(scope="session")
def semeval_slice(shared_data, tmp_path_factory) -> Path:
    """The first 40 examples of SemEval-2010 Task 8's training file, written to a temporary file."""
    lines = (shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT").read_text().splitlines()
    path = tmp_path_factory.mktemp("semeval") / "slice.txt"
    path.write_text("\n".join(lines[: 40 * 4]) + "\n")
    return path


@pytest.fixture(scope="session")
def kbp37_sample() -> Path:
    """Twelve invented examples in KBP37's format as distributed (mentions with spaces inside the tags, no comment
    lines), one with an empty mention (`<e1> </e1>`), as 146 of the real files' examples have."""
    return FIXTURES / "data" / "kbp37_sample.txt"


@pytest.fixture(scope="session")
def tacred_train(shared_data) -> Path:
    return shared_data / "tacred_sample" / "train.json"


@pytest.fixture(scope="session")
def record_sample(shared_data) -> Path:
    """Two real ReCoRD passages with one query each (the official JSON format)."""
    return shared_data / "record" / "record_sample.json"


@pytest.fixture(scope="session")
def tiny_xlnet_dir(tmp_path_factory) -> Path:
    return write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-xlnet"), "xlnet")


@pytest.fixture(scope="session")
def squad_slice(shared_data, tmp_path_factory) -> Path:
    """The first two paragraphs of SQuAD 1.1 dev (article Super_Bowl_50, 55 questions), written to a temporary file."""
    squad = json.loads((shared_data / "squad1.1" / "dev-v1.1.json").read_text(encoding="utf-8"))
    article = squad["data"][0]
    path = tmp_path_factory.mktemp("squad") / "slice.json"
    path.write_text(
        json.dumps({"version": squad["version"], "data": [{**article, "paragraphs": article["paragraphs"][:2]}]})
    )
    return path


# Names linked on the page "Super Bowl 50" and their targets, for SQuAD's entity inputs (the article pages of
# SQuAD are not in the shared dumps). "gold" has a link probability below the configs' 0.01; "Levi's Stadium"
# is left out of tiny_luke_squad_dir's entity vocabulary.
SUPER_BOWL_50_LINKS = {
    "Super Bowl": "Super Bowl",
    "American football": "American football",
    "National Football League": "National Football League",
    "NFL": "National Football League",
    "American Football Conference": "American Football Conference",
    "AFC": "American Football Conference",
    "National Football Conference": "National Football Conference",
    "NFC": "National Football Conference",
    "Denver Broncos": "Denver Broncos",
    "Broncos": "Denver Broncos",
    "Carolina Panthers": "Carolina Panthers",
    "Panthers": "Carolina Panthers",
    "Levi's Stadium": "Levi's Stadium",
    "San Francisco Bay Area": "San Francisco Bay Area",
    "Santa Clara, California": "Santa Clara, California",
    "California": "California",
    "Cam Newton": "Cam Newton",
    "Arizona Cardinals": "Arizona Cardinals",
    "New England Patriots": "New England Patriots",
    "Super Bowl XLIX": "Super Bowl XLIX",
    "gold": "Gold (color)",
}


@pytest.fixture(scope="session")
def squad_mention_dictionary(tmp_path_factory) -> Path:
    """A mention dictionary (the JSON of `allennlp build-mention-dictionary`) with the page "Super Bowl 50"."""
    probability = {name: 0.002 if name == "gold" else 0.5 for name in SUPER_BOWL_50_LINKS}
    path = tmp_path_factory.mktemp("squad-mentions") / "mention_dictionary.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "dump": "handwritten",
                "min_link_probability": 0.0,
                "pages": {"Super Bowl 50": SUPER_BOWL_50_LINKS},
                "link_probability": probability,
                "stats": {},
            }
        )
    )
    return path


@pytest.fixture(scope="session")
def tiny_luke_squad_dir(tmp_path_factory) -> Path:
    """A tiny LUKE whose entity_vocab.json holds the targets of SUPER_BOWL_50_LINKS but "Levi's Stadium"."""
    directory = write_tiny_checkpoint(tmp_path_factory.mktemp("tiny-luke-squad"), "luke")
    titles = ["[PAD]", "[UNK]", "[MASK]"] + sorted(set(SUPER_BOWL_50_LINKS.values()) - {"Levi's Stadium"})
    (directory / "entity_vocab.json").write_text(json.dumps({title: i for i, title in enumerate(titles)}))
    return directory


@pytest.fixture(scope="session")
def pretraining_corpus(shared_data, tmp_path_factory) -> Path:
    """A pretraining corpus directory (95 rows of up to 128 subwords) from 40 CoNLL-2003 documents, their
    named-entity spans as entities (tests/pretraining_corpus.py)."""
    from tests.pretraining_corpus import write_corpus

    return write_corpus(tmp_path_factory.mktemp("pretraining") / "corpus", shared_data / "conll2003" / "eng.train")


@pytest.fixture(scope="session")
def tiny_roberta_mlm_dir(tmp_path_factory) -> Path:
    """A tiny random RobertaForMaskedLM (with its lm_head) and the RoBERTa tokenizer."""
    from tests.pretraining_corpus import write_tiny_roberta_mlm

    return write_tiny_roberta_mlm(tmp_path_factory.mktemp("tiny-roberta-mlm"))


@pytest.fixture(scope="session")
def ed_wikipedia(tmp_path_factory) -> dict:
    """Entity disambiguation data from the real 206-page dump's first two articles (tests/entity_disambiguation.py):
    entity vocabulary, mention dictionary, corpus, tiny checkpoint with the entity head, a benchmark file."""
    from tests.entity_disambiguation import build_wikipedia_ed_data

    return build_wikipedia_ed_data(tmp_path_factory.mktemp("ed-wikipedia"))


@pytest.fixture(scope="session")
def ed_conll(tmp_path_factory) -> dict:
    """Six CoNLL-2003 testa documents in the ED benchmarks' format, two candidates a mention, and a tiny checkpoint
    whose entity vocabulary holds their titles (tests/entity_disambiguation.py)."""
    from tests.entity_disambiguation import write_conll_benchmark

    return write_conll_benchmark(tmp_path_factory.mktemp("ed-conll"))
