"""luke_allennlp/cli/push_to_hf.py: `allennlp push-to-hf` on the current hub API, and offline."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_commands import run_allennlp
from tests.conftest import REPO_ROOT

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
    env = {
        **os.environ,
        "FAKE_HUB_RECORD": str(record),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
    }
    run_allennlp(
        "push-to-hf",
        "-n",
        "tiny",
        "-o",
        "someone",
        "-s",
        str(run),
        "-c",
        "First model",
        "--include-package",
        "fake_hub",
        env=env,
    )
    calls = json.loads(record.read_text())
    assert calls == [
        {"call": "file_exists", "repo_id": "someone/tiny", "filename": "README.md"},
        {"call": "create_repo", "repo_id": "someone/tiny", "private": False, "exist_ok": True},
        {"call": "upload_folder", "repo_id": "someone/tiny", "commit_message": "First model"},
    ]
    uploaded = Path(str(record) + ".upload")
    assert sorted(p.relative_to(uploaded).as_posix() for p in uploaded.rglob("*")) == [
        "README.md",
        "config.json",
        "metrics.json",
        "vocabulary",
        "vocabulary/labels.txt",
        "weights.th",
    ]
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
        "README.md",
        "bundled",
        "bundled/0-base",
        "bundled/0-base/tokenizer.json",
        "bundled/manifest.json",
        "config.json",
        "vocabulary",
        "vocabulary/labels.txt",
        "weights.th",
    ]
    assert (uploaded / "weights.th").read_bytes() == b"archived weights"


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
        (
            False,
            "the hub cannot be reached (ConnectError: [Errno 111] Connection refused): check the network, then "
            "run again",
        ),
        (True, "offline mode is enabled (HF_HUB_OFFLINE): unset HF_HUB_OFFLINE to upload"),
    ]:
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
