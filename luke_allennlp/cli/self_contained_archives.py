"""
Self-contained archives.

An archive rebuilt its model and readers from config paths outside it (the base checkpoint, the stage-1 archive of
`from_archive`, a corpus): allennlp's `archive_model` stores the config as written, so moving those files broke
`allennlp predict` and `export-luke`. `archive_model` and `load_archive` of `allennlp.models.archival` are replaced by
`luke_allennlp.archival`'s, which bundle those files into the archive and point the archived config at them (and load
an archive as data: its config read as JSON and checked before anything is built).
Everything that archives or loads (`allennlp train`, `predict`, `evaluate`, `Predictor.from_path`, `from_archive`)
binds the replacements, since they are set before the module is first imported by anyone.
"""

import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace


def repair_self_contained_archives(module: types.ModuleType) -> None:
    if repaired(module.load_archive):
        return

    # `luke_allennlp.archival` imports allennlp's archival, which is executing when this runs: imported on first call.
    def archive_model(*args: Any, **kwargs: Any) -> str:
        from luke_allennlp import archival

        return archival.archive_model(*args, **kwargs)

    def load_archive(*args: Any, **kwargs: Any) -> Any:
        from luke_allennlp import archival

        return archival.load_archive(*args, **kwargs)

    replace(module, "archive_model", archive_model)
    replace(module, "load_archive", load_archive)


def repair_archives(module: types.ModuleType) -> None:
    from luke_allennlp.cli.archives import repair_extraction

    repair_extraction(module)  # 7
    repair_self_contained_archives(module)  # 9
