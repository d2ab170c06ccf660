"""`python -m luke_allennlp.cli`: writes the start-up hook, `luke_allennlp_compat.pth`, into site-packages (an
editable install does not ship it; `make install` runs this)."""

import os
import sysconfig
from typing import Optional

from luke_allennlp.cli import PTH_LINE


def install_pth(directory: Optional[str] = None) -> str:
    directory = directory or sysconfig.get_paths()["purelib"]
    path = os.path.join(directory, "luke_allennlp_compat.pth")
    with open(path, "w", encoding="utf-8") as f:
        f.write(PTH_LINE)
    return path


if __name__ == "__main__":
    print(install_pth())
