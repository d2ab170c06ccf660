"""
Packaging lives in setup.cfg; this file ships `luke_allennlp_compat.pth` (see `luke_allennlp.cli`) and installs the
repository's `data_readers/` folder as the package `luke_allennlp_readers`: a generic top-level name such as
`data_readers` could be another distribution's too, and pip would let one overwrite the other's files.
"""

import os
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from luke_allennlp.cli import PTH_LINE  # noqa: E402  (it and the package's __init__ import only the standard library)


class BuildPyWithPth(build_py):
    """Puts the .pth file at the root of the built tree, so wheels install it into site-packages."""

    def run(self) -> None:
        super().run()
        with open(os.path.join(self.build_lib, "luke_allennlp_compat.pth"), "w", encoding="utf-8") as f:
            f.write(PTH_LINE)


READERS = "luke_allennlp_readers"
setup(
    cmdclass={"build_py": BuildPyWithPth},
    packages=find_packages(include=["luke_allennlp", "luke_allennlp.*", "luke_allennlp_compat"]) + [READERS],
    package_dir={READERS: "data_readers"},
)
