"""The start-up hook (luke_allennlp/cli/__main__.py): the `.pth` line that installs the compatibility layer with the
product's hooks."""

import sysconfig
from pathlib import Path

from luke_allennlp.cli import PTH_LINE


def test_pth_hook_is_installed():
    pth = Path(sysconfig.get_paths()["purelib"]) / "luke_allennlp_compat.pth"
    assert pth.read_text() == PTH_LINE
