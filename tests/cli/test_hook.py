"""The start-up hook (luke_allennlp_compat/hook.py): the `.pth` line that installs it."""

import sysconfig
from pathlib import Path

import luke_allennlp_compat


def test_pth_hook_is_installed():
    pth = Path(sysconfig.get_paths()["purelib"]) / "luke_allennlp_compat.pth"
    assert pth.read_text() == luke_allennlp_compat.PTH_LINE
