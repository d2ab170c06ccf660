"""
Safe extraction wherever allennlp extracts a model archive.

`allennlp.models.archival` extracts `model.tar.gz` with `tarfile.extractall` and no filter (CVE-2007-4559; the patch
offered upstream, allenai/allennlp#5725, was never merged), and tarfile stops reading before gzip's trailer. allennlp's
`extracted_archive` (used by `load_archive`: `predict`, `evaluate`, `from_archive` models, the pretrained initializer)
extracts with `luke_allennlp.resources.archives.extract_archive` instead, `cached_path`'s tar check
(`extract_archive=True`) is its `checked_tarfile`, and `data` becomes the default filter of any other extraction in
the process (`allennlp.tools.archive_surgery`).
"""

import types
from typing import Any

from luke_allennlp.resources.archives import checked_tarfile, extract_archive
from luke_allennlp_compat.patch import repaired


def repair_cached_path(module: types.ModuleType) -> None:
    module.check_tarfile = checked_tarfile


def repair_extraction(module: types.ModuleType) -> None:
    import contextlib
    import shutil
    import tarfile
    import tempfile

    if repaired(module.extracted_archive):
        return

    @contextlib.contextmanager
    def extracted_archive(resolved_archive_file: Any, cleanup: bool = True) -> Any:
        tempdir = tempfile.mkdtemp()
        try:
            module.logger.info(f"extracting archive file {resolved_archive_file} to temp dir {tempdir}")
            extract_archive(resolved_archive_file, tempdir)
        except BaseException:
            shutil.rmtree(tempdir, ignore_errors=True)  # (allennlp's own leaves a failed extraction behind)
            raise
        try:
            yield tempdir
        finally:
            if cleanup:
                module.logger.info(f"removing temporary unarchived model dir at {tempdir}")
                shutil.rmtree(tempdir, ignore_errors=True)

    extracted_archive.__doc__ = (
        "allennlp's `extracted_archive`, extracting with `luke_allennlp.resources.archives.extract_archive`."
    )
    extracted_archive.__luke_allennlp_compat__ = frozenset({__name__})  # type: ignore[attr-defined]
    module.extracted_archive = extracted_archive
    # Any other extraction in the process (allennlp.tools.archive_surgery) gets the `data` filter by default, as
    # it will from Python 3.14 on; a default someone else set is kept.
    if getattr(tarfile.TarFile, "extraction_filter", False) is None and hasattr(tarfile, "data_filter"):
        tarfile.TarFile.extraction_filter = staticmethod(tarfile.data_filter)
