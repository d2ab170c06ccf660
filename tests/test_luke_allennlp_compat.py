"""The workarounds in luke_allennlp_compat/, and the real `allennlp` command that depends on them."""

import json
import math
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch

import luke_allennlp_compat
from tests.conftest import FIXTURES, REPO_ROOT

ALLENNLP = Path(sys.executable).with_name("allennlp")


def test_pth_hook_is_installed():
    pth = Path(sysconfig.get_paths()["purelib"]) / "luke_allennlp_compat.pth"
    assert pth.read_text() == luke_allennlp_compat.PTH_LINE


def test_plugins_are_found_from_any_directory(tmp_path, monkeypatch):
    """Repair 10: outside the repository (no `.allennlp_plugins`) discovery still yields the installed plugin
    package; in the repository, after the file's plugins, whose `data_readers` it is an alias of."""
    from allennlp.common import plugins

    monkeypatch.setattr(plugins, "GLOBAL_PLUGINS_FILENAME", str(tmp_path / "no-global-plugins"))
    monkeypatch.chdir(tmp_path)
    assert list(plugins.discover_plugins()) == ["luke_allennlp_readers"]
    monkeypatch.chdir(REPO_ROOT)
    assert list(plugins.discover_plugins()) == ["luke_allennlp", "data_readers", "luke_allennlp_readers"]
    import luke_allennlp_readers

    import data_readers

    assert luke_allennlp_readers is data_readers  # one package: nothing registered twice
    # The real command run from elsewhere: tests/commands/test_export_luke_tasks.py runs `allennlp export-luke` in a
    # temporary directory.


def test_huggingface_adamw_follows_the_transformers_algorithm():
    adamw = luke_allennlp_compat.huggingface_adamw()  # what transformers.AdamW becomes for allennlp
    lr, beta1, beta2, eps, decay = 0.1, 0.9, 0.99, 1e-6, 0.5
    param = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = adamw([param], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=decay)
    expected = param.detach().clone()
    m = torch.zeros(2)
    v = torch.zeros(2)
    for step, grad in enumerate([torch.tensor([0.5, -1.0]), torch.tensor([2.0, 0.25])], start=1):
        param.grad = grad
        optimizer.step()
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        expected = expected - step_size * m / (v.sqrt() + eps)
        expected = expected - lr * decay * expected  # decoupled decay, after the Adam step
        assert torch.allclose(param.detach(), expected, atol=1e-6)
    # Without bias correction the first step is lr * m / (sqrt(v) + eps).
    plain = torch.nn.Parameter(torch.tensor([1.0]))
    plain.grad = torch.tensor([1.0])
    adamw([plain], lr=0.1, correct_bias=False).step()
    assert plain.item() == pytest.approx(1.0 - 0.1 * 0.1 / (math.sqrt(0.001) + 1e-6))
    assert isinstance(optimizer.state_dict()["state"][0]["step"], int)  # weights_only-loadable


def test_allennlp_huggingface_adamw_optimizer_builds():
    from allennlp.common import Params
    from allennlp.training.optimizers import Optimizer

    model = torch.nn.Linear(2, 2)
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()),
        params=Params({"type": "huggingface_adamw", "lr": 0.01, "correct_bias": False}),
    )
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    assert optimizer.param_groups[0]["correct_bias"] is False
    assert isinstance(optimizer, luke_allennlp_compat.huggingface_adamw())


def test_pretrained_transformer_tokenizer_and_indexer(tiny_luke_dir):
    from allennlp.data.tokenizers import PretrainedTransformerTokenizer

    tokenizer = PretrainedTransformerTokenizer(str(tiny_luke_dir))
    tokens = tokenizer.tokenize("Hello world")
    assert [t.text_id for t in tokens] == [0, 31414, 232, 2]  # ids from the shared data's README
    assert [t.idx for t in tokens] == [None, 0, 6, None]


def test_placeholder_torchvision_explains_itself():
    """In a fresh interpreter where torchvision cannot be imported, allennlp's vision code still imports."""
    code = (
        "import sys; sys.modules['torchvision'] = None\n"  # `import torchvision` now raises ImportError
        "import allennlp.modules.vision, allennlp.data.image_loader as il\n"
        "try:\n"
        "    il.torchvision.io.read_image('x.png')\n"
        "except ImportError as e:\n"
        "    print('ERROR:', e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "torchvision.io.read_image is unavailable: torchvision could not be imported" in result.stdout


def test_allennlp_trains_without_its_heavy_optional_dependencies(tiny_luke_dir, tmp_path):
    """As on a GPU machine given only `make wheelhouse`: no spaCy, boto3 or Google Cloud client. Every allennlp
    module still imports, a config trains, and what needs a missing package says which and why."""
    missing = ["spacy", "boto3", "botocore", "google.cloud", "google.api_core", "google.auth", "torchvision"]
    code = (
        f"import sys\nfor name in {missing!r}: sys.modules[name] = None\n"
        "import allennlp.commands, allennlp.common.util as util, cached_path, luke_allennlp\n"
        "from allennlp.commands.train import train_model_from_file\n"
        f"train_model_from_file({str(FIXTURES / 'configs' / 'luke_classifier.jsonnet')!r}, {str(tmp_path / 'run')!r},\n"
        "                      overrides='{\"trainer.num_epochs\": 1}')\n"
        # allennlp's sanitize (every prediction goes through it) checks isinstance against spaCy's Token
        "print('SANITIZED:', util.sanitize({'tokens': ['a'], 'score': 0.5}))\n"
        "try:\n"
        "    util.get_spacy_model('en_core_web_sm', False, False, False)\n"
        "except ImportError as e:\n"
        "    print('ERROR:', e)\n"
    )
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.tar.gz").exists()
    assert "is unavailable: spacy could not be imported" in result.stdout and "install spacy" in result.stdout
    assert "SANITIZED: {'tokens': ['a'], 'score': 0.5}" in result.stdout


@pytest.mark.parametrize(
    "torchvision_init, expected",
    [
        # Installed but built for another torch, as PyPI's torchvision beside this machine's CPU torch.
        (
            "raise RuntimeError('operator torchvision::nms does not exist')",
            "placeholder: torchvision could not be imported (RuntimeError: operator torchvision::nms",
        ),
        # A working torchvision is used as it is.
        ("class io:\n    pass\n", "real"),
    ],
    ids=["broken", "working"],
)
def test_torchvision_that_loads_is_kept_and_one_that_breaks_is_replaced(tmp_path, torchvision_init, expected):
    package = tmp_path / "torchvision"
    package.mkdir()
    (package / "__init__.py").write_text(torchvision_init)
    code = (
        "import allennlp.data.image_loader as il, luke_allennlp_compat.optional_dependencies as c\n"
        "tv = il.torchvision\n"
        "print('placeholder: ' + tv.__reason__ if isinstance(tv, c._PlaceholderModule) else 'real')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().startswith(expected)


def run_allennlp(*args, env):
    result = subprocess.run([str(ALLENNLP), *args], capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600)
    assert result.returncode == 0, f"allennlp {args[0]} failed:\n{result.stderr[-4000:]}"
    return result


def test_allennlp_command_trains_evaluates_predicts_and_recovers(tiny_luke_dir, tmp_path):
    """The real console command, from the repository root: `.allennlp_plugins` loads the plugin."""
    data = FIXTURES / "data" / "sentiment.jsonl"
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(data)}
    config = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
    out = tmp_path / "run"
    trained = run_allennlp("train", config, "-s", str(out), env=env)
    assert "FutureWarning" not in trained.stderr  # allennlp's torch.cuda.amp.autocast (repair 11)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["training_loss"] < json.loads((out / "metrics_epoch_0.json").read_text())["training_loss"]
    assert metrics["training_accuracy"] >= 0.9  # 16 sentences, 10 epochs: the tiny model fits them

    evaluation = tmp_path / "eval.json"
    evaluated = run_allennlp("evaluate", str(out / "model.tar.gz"), str(data), "--output-file", str(evaluation),
                             env=env)  # fmt: skip
    assert 0.0 <= json.loads(evaluation.read_text())["accuracy"] <= 1.0
    assert f"Reading evaluation data from {data}\n" in evaluated.stderr  # not its stem, "sentiment" (repair 12)

    inputs, predictions = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inputs.write_text('{"sentence": "a wonderful film"}\n{"sentence": "a dull film"}\n')
    run_allennlp(
        "predict", str(out / "model.tar.gz"), str(inputs), "--output-file", str(predictions), "--silent", env=env
    )
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    assert len(rows) == 2 and all(r["label"] in ("pos", "neg") and len(r["probs"]) == 2 for r in rows)

    # --recover reads the training state back with torch.load's default weights_only=True.
    shutil.rmtree(out / "model.tar.gz", ignore_errors=True)
    result = run_allennlp("train", config, "-s", str(out), "--recover", env=env)
    assert "Recovering from prior training" in result.stderr
    states = list(out.glob("training_state_e*.th"))
    assert states and max(torch.load(path)["epochs_completed"] for path in states) == 10


def test_hub_name_offline_fails_fast_with_one_line(tmp_path):
    """Repair 7: a hub name with HF_HUB_OFFLINE=1 stops `allennlp train` at once, with one line and no traceback."""
    import time

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MODEL_NAME": "studio-ousia/luke-base",
           "TRAIN_DATA_PATH": str(tmp_path / "train.txt"), "VALIDATION_DATA_PATH": str(tmp_path / "dev.txt")}  # fmt: skip
    started = time.monotonic()
    result = subprocess.run(
        [str(ALLENNLP), "train", "configs/relation_classification/semeval.jsonnet", "-s", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " - INFO - " not in line]
    assert errors == [
        "allennlp: error: 'studio-ousia/luke-base' is not a local directory, is not in the Hugging Face cache, and "
        "the hub cannot be reached (HF_HUB_OFFLINE=1): pass the path of a downloaded checkpoint directory instead, "
        "or go online"
    ], result.stderr[-3000:]
    # No retries: the time is the command's start-up (~15 s on a loaded machine), not 30 s more of them.
    assert "Retrying" not in result.stderr and elapsed < 120


def test_user_error_is_found_in_the_exception_chain():
    from luke_allennlp.modeling.loading import HubUnavailableError

    try:
        try:
            raise HubUnavailableError("the message")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert str(luke_allennlp_compat.user_error(outer)) == "the message"
    assert luke_allennlp_compat.user_error(ValueError("not for the user")) is None


FAKE_HUB = '''
"""Stands in for huggingface_hub.HfApi in `allennlp push-to-hf` (no network): records the calls and the upload."""
import json, os, shutil, sys
import allennlp.common.push_to_hf  # noqa: F401  (allennlp.common's attribute of that name is the function)

RECORD = os.environ["FAKE_HUB_RECORD"]


class FakeHfApi:
    def __init__(self, token=None):
        self.token = token

    def _record(self, call, **kwargs):
        calls = json.load(open(RECORD)) if os.path.exists(RECORD) else []
        calls.append({"call": call, **kwargs})
        json.dump(calls, open(RECORD, "w"))

    def file_exists(self, repo_id, filename, **kwargs):
        self._record("file_exists", repo_id=repo_id, filename=filename)
        return False

    def create_repo(self, repo_id, **kwargs):
        self._record("create_repo", repo_id=repo_id, **kwargs)
        return "https://huggingface.co/" + repo_id

    def upload_folder(self, *, repo_id, folder_path, **kwargs):
        shutil.copytree(folder_path, RECORD + ".upload")
        self._record("upload_folder", repo_id=repo_id, **kwargs)


sys.modules["allennlp.common.push_to_hf"].HfApi = FakeHfApi
'''


def test_push_to_hf_uploads_with_the_current_hub_api(tmp_path):
    """Repair 3: `allennlp push-to-hf` creates the repository and uploads the allow-listed files in one commit."""
    run = tmp_path / "run"
    (run / "vocabulary").mkdir(parents=True)
    (run / "vocabulary" / "labels.txt").write_text("pos\nneg\n")
    (run / "config.json").write_text(json.dumps({"model": {"type": "basic_classifier"}}))
    (run / "best.th").write_bytes(b"weights")
    (run / "metrics.json").write_text("{}")
    (run / "training_state_e1.th").write_bytes(b"not uploaded")
    (tmp_path / "fake_hub.py").write_text(FAKE_HUB)
    record = tmp_path / "calls.json"
    env = {**os.environ, "FAKE_HUB_RECORD": str(record),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    run_allennlp("push-to-hf", "-n", "tiny", "-o", "someone", "-s", str(run), "-c", "First model",
                 "--include-package", "fake_hub", env=env)  # fmt: skip
    calls = json.loads(record.read_text())
    assert calls == [
        {"call": "file_exists", "repo_id": "someone/tiny", "filename": "README.md"},
        {"call": "create_repo", "repo_id": "someone/tiny", "private": False, "exist_ok": True},
        {"call": "upload_folder", "repo_id": "someone/tiny", "commit_message": "First model"},
    ]
    uploaded = Path(str(record) + ".upload")
    assert sorted(p.relative_to(uploaded).as_posix() for p in uploaded.rglob("*")) == [
        "README.md", "config.json", "metrics.json", "vocabulary", "vocabulary/labels.txt", "weights.th",
    ]  # fmt: skip
    assert (uploaded / "weights.th").read_bytes() == b"weights"  # best.th, as allennlp names it on the hub
    assert "allennlp" in (uploaded / "README.md").read_text()  # allennlp's model-card template

    # An archive: its bundled files (luke_allennlp.archival) go up with it, so that the upload loads elsewhere.
    import tarfile

    (run / "bundled" / "0-base").mkdir(parents=True)
    (run / "bundled" / "0-base" / "tokenizer.json").write_text("{}")
    (run / "bundled" / "manifest.json").write_text(json.dumps({"paths": {"model.model_name": "bundled/0-base"}}))
    (run / "weights.th").write_bytes(b"archived weights")
    with tarfile.open(tmp_path / "model.tar.gz", "w:gz") as archive:
        for name in ("config.json", "weights.th", "vocabulary", "bundled"):
            archive.add(run / name, arcname=name)
    record.unlink()
    shutil.rmtree(uploaded)
    run_allennlp(
        "push-to-hf", "-n", "tiny", "-a", str(tmp_path / "model.tar.gz"), "--include-package", "fake_hub", env=env
    )
    assert [call["repo_id"] for call in json.loads(record.read_text())] == ["tiny"] * 3
    assert sorted(p.relative_to(uploaded).as_posix() for p in uploaded.rglob("*")) == [
        "README.md", "bundled", "bundled/0-base", "bundled/0-base/tokenizer.json", "bundled/manifest.json",
        "config.json", "vocabulary", "vocabulary/labels.txt", "weights.th",
    ]  # fmt: skip
    assert (uploaded / "weights.th").read_bytes() == b"archived weights"


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys, command):
    """Repair 12: `predict IN --output-file IN` emptied IN; `evaluate DATA --predictions-output-file DATA` replaced
    the data. The same path, a symbolic link, a hard link, or the archive: refused before any file is opened."""
    from allennlp.commands import main

    archive, data = tmp_path / "model.tar.gz", tmp_path / "data.jsonl"
    archive.write_bytes(b"the archive")
    data.write_text('{"sentence": "kept"}\n')
    (tmp_path / "symlink.jsonl").symlink_to(data)
    os.link(data, tmp_path / "hardlink.jsonl")
    options = ["--output-file"] if command == "predict" else ["--output-file", "--predictions-output-file"]
    cases = [(data, "the input file"), (tmp_path / "symlink.jsonl", f"the input file ({data}, through a link)"),
             (tmp_path / "hardlink.jsonl", f"the input file ({data}, through a link)"), (archive, "the archive")]  # fmt: skip
    for option in options:
        for output, what in cases:
            monkeypatch.setattr(sys, "argv", ["allennlp", command, str(archive), str(data), option, str(output)])
            with pytest.raises(SystemExit) as exited:
                main(prog="allennlp")
            assert exited.value.code == 1
            assert capsys.readouterr().err == (
                f"allennlp: error: {option} {output} is {what}: writing it would destroy it; choose another {option}\n"
            )
    if command == "evaluate":  # the metrics over the predictions
        (tmp_path / "out.json").write_text("{}")
        monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(archive), str(data), "--output-file",
                                          str(tmp_path / "out.json"), "--predictions-output-file",
                                          str(tmp_path / "out.json")])  # fmt: skip
        with pytest.raises(SystemExit):
            main(prog="allennlp")
        assert "--predictions-output-file" in capsys.readouterr().err
    assert data.read_text() == '{"sentence": "kept"}\n' and archive.read_bytes() == b"the archive"


def test_errors_raised_on_purpose_by_the_project_are_user_errors():
    """Repair 8: a `raise` statement of this project's code (a reader's "FILE:LINE: ..." error) is shown as one line;
    an error inside a call it makes (a bug) keeps its traceback."""
    import luke_allennlp

    project_file = str(Path(luke_allennlp.__file__).with_name("not_a_module.py"))
    namespace = {}
    exec(compile("def on_purpose():\n    raise ValueError('f.txt:3: bad')\n\ndef bug():\n    return int('x')\n",
                 project_file, "exec"), namespace)  # fmt: skip
    for function, expected in [(namespace["on_purpose"], "f.txt:3: bad"), (namespace["bug"], None)]:
        try:
            function()
        except ValueError as error:
            shown = luke_allennlp_compat.user_error(error)
            assert (str(shown) if shown else None) == expected
    try:  # the same statement elsewhere is not the project's
        exec(compile("raise ValueError('x')", __file__, "exec"))
    except ValueError as error:
        assert luke_allennlp_compat.user_error(error) is None
    assert str(luke_allennlp_compat.user_error(FileNotFoundError("file x not found"))) == "file x not found"


def test_known_input_errors_are_one_line_and_allennlp_debug_shows_the_traceback(tmp_path, monkeypatch, capsys):
    from allennlp.commands import main

    config, new = str(FIXTURES / "configs" / "luke_classifier.jsonnet"), str(tmp_path / "new")
    (tmp_path / "bad.jsonnet").write_text('{ "a": 1,, }')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.json").write_text("{}")
    cases = [
        (["evaluate", str(tmp_path / "missing.tar.gz"), "data.txt"], f"file {tmp_path / 'missing.tar.gz'} not found"),
        (["train", str(tmp_path / "missing.jsonnet"), "-s", new], f"file {tmp_path / 'missing.jsonnet'} not found"),
        (["train", config, "-s", new], f"{config}:3:19-42: undefined external variable: MODEL_DIR "
         "(the config reads it with std.extVar: set it in the environment, e.g. MODEL_DIR=...)"),
        (["train", str(tmp_path / "bad.jsonnet"), "-s", new],
         f"{tmp_path / 'bad.jsonnet'}:1:10: unexpected: \",\" while parsing field definition"),
        (["train", config, "-s", str(tmp_path / "out")], f"Serialization directory ({tmp_path / 'out'}) already "
         "exists and is not empty. Specify --recover to recover from an existing output folder."),
    ]  # fmt: skip
    for argv, message in cases:
        if argv[-1] == str(tmp_path / "out"):  # the config's variables set: the directory is checked next
            monkeypatch.setenv("MODEL_DIR", "m")
            monkeypatch.setenv("DATA", "d")
        monkeypatch.setattr(sys, "argv", ["allennlp", *argv])
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1 and capsys.readouterr().err == f"allennlp: error: {message}\n"
    assert not os.path.exists(new)
    monkeypatch.setenv("ALLENNLP_DEBUG", "1")
    monkeypatch.setattr(sys, "argv", ["allennlp", *cases[0][0]])
    with pytest.raises(FileNotFoundError, match="missing.tar.gz not found"):
        main(prog="allennlp")


def test_a_bad_line_in_the_training_data_stops_allennlp_train_with_one_line(tiny_luke_dir, shared_data, tmp_path):
    """The real command: the reader's error naming the file and line, and no traceback."""
    lines = (shared_data / "conll2003" / "eng.testa").read_text().splitlines()[:40]
    lines[7] = "LEICESTERSHIRE"  # line 8: the tag column missing
    (tmp_path / "eng.testa").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "MODEL_NAME": str(tiny_luke_dir), "TRAIN_DATA_PATH": str(tmp_path / "eng.testa"),
           "VALIDATION_DATA_PATH": str(tmp_path / "eng.testa")}  # fmt: skip
    result = subprocess.run([str(ALLENNLP), "train", "configs/ner/conll2003.jsonnet", "-s", str(tmp_path / "out")],
                            capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600)  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.splitlines()[-1] == (
        f"allennlp: error: {tmp_path / 'eng.testa'}:8: expected 'word ... NER' columns (e.g. 'word POS chunk NER') "
        "with an O/B-X/I-X tag last, got 'LEICESTERSHIRE'"
    )


def test_push_to_hf_without_a_network_is_one_line_and_its_help_matches_the_readme(tmp_path, monkeypatch, capsys):
    """Repair 3: no 90-line httpx traceback offline; `--help` says `hf auth login` and that `-l` is ignored, as the
    docs (docs/checkpoints.md) do."""
    import functools

    from allennlp.commands import main
    from huggingface_hub import HfApi, constants

    push_module = sys.modules["allennlp.common.push_to_hf"]
    run = tmp_path / "run"
    (run / "vocabulary").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    (run / "best.th").write_bytes(b"weights")
    monkeypatch.setattr(sys, "argv", ["allennlp", "push-to-hf", "-n", "tiny", "-s", str(run)])
    monkeypatch.setattr(push_module, "HfApi", functools.partial(HfApi, endpoint="http://127.0.0.1:9"))  # nothing there
    for offline, reason in [
        (False, "the hub cannot be reached (ConnectError: [Errno 111] Connection refused): check the network, then "
                "run again"),
        (True, "offline mode is enabled (HF_HUB_OFFLINE): unset HF_HUB_OFFLINE to upload"),
    ]:  # fmt: skip
        monkeypatch.setattr(constants, "is_offline_mode", lambda offline=offline: offline)
        with pytest.raises(SystemExit):
            main(prog="allennlp")
        assert capsys.readouterr().err == f"allennlp: error: cannot push to tiny on the Hugging Face Hub: {reason}\n"

    monkeypatch.setattr(sys, "argv", ["allennlp", "push-to-hf", "--help"])
    with pytest.raises(SystemExit):
        main(prog="allennlp")
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Log in first with `hf auth login` (or set HF_TOKEN)" in help_text and "huggingface-cli" not in help_text
    assert "-l LOCAL_REPO_PATH, --local-repo-path LOCAL_REPO_PATH ignored: nothing is cloned" in help_text
    docs = " ".join((REPO_ROOT / "docs" / "checkpoints.md").read_text().split())  # (was README.md)
    assert "hf auth login" in docs and "`--local-repo-path` is ignored (nothing is cloned;" in docs
