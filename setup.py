"""Packaging lives in setup.cfg; this file only ships `luke_allennlp_compat.pth` (see that module)."""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from luke_allennlp_compat import PTH_LINE  # noqa: E402  (a stdlib-only module)


class BuildPyWithPth(build_py):
    """Puts the .pth file at the root of the built tree, so wheels install it into site-packages."""

    def run(self) -> None:
        super().run()
        with open(os.path.join(self.build_lib, "luke_allennlp_compat.pth"), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)


setup(cmdclass={"build_py": BuildPyWithPth})
