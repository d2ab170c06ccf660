"""What the Wikipedia commands share: the worker-count option and clear errors for bad input."""

import argparse
import functools
import logging
import os
import sys
from typing import Any, Callable, Sequence, Tuple

from luke_allennlp.resources.output import DiskFullError, disk_full
from luke_allennlp.wikipedia.dump import DumpError
from luke_allennlp.wikipedia.parallel import default_num_workers

logger = logging.getLogger(__name__)


def add_num_workers(subparser: argparse.ArgumentParser) -> None:
    subparser.add_argument(
        "--num-workers",
        type=int,
        default=default_num_workers(),
        help="processes working on pages (1: none besides the main one); default: the cores available",
    )


def exit_on_bad_input(
    name: str, function: Callable[[argparse.Namespace], None]
) -> Callable[[argparse.Namespace], None]:
    """
    Runs a command, turning an input problem (not a dump, a missing file, a malformed vocabulary, a non-empty
    output directory: errors that name the file) into a one-line error and exit status 1.
    """

    @functools.wraps(function)
    def run(args: argparse.Namespace) -> None:
        try:
            function(args)
        except (DumpError, OSError, ValueError) as error:
            if os.environ.get("ALLENNLP_DEBUG"):  # the traceback, as for the `allennlp` command's own user errors
                raise
            logger.debug("%s failed", name, exc_info=True)
            full = disk_full(error)
            shown = error if full is None else DiskFullError(full.errno, full.strerror, full.filename)
            sys.exit(f"allennlp {name}: error: {shown}")

    return run


def make_output_folder(output: str) -> None:
    """Creates the folders of an output file before the work starts (a missing one made the command fail after it,
    with a "No such file or directory" that read like a missing input)."""
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)


def print_table(rows: Sequence[Tuple[str, Any]]) -> None:
    """A two-column summary for people (numbers with thousands separators); the full JSON goes to a file."""
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value:>12,}" if isinstance(value, int) else f"  {name:<{width}}  {value}")
