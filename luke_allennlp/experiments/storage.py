"""
The study's storage, shared by the processes of a search (`allennlp tune`, and the `luke_optuna_pruning` callback of
each trial's training): Optuna's RDB storage of a URL (a SQLite file waits for another process's write; a database
server's connections are checked before use), with heartbeats so that the trials of a killed process are failed.

Optuna creates the storage's tables and its study on first use without guarding against another process doing the
same at that moment (two `allennlp tune` started together on a new study: "table studies already exists", or a
UNIQUE constraint failed). Processes opening a SQLite file take turns (a lock beside the file); on a database server
the opening is tried again, the second time finding what the other process made.
"""

import contextlib
import random
import time
import warnings
from typing import Any, Iterator, Optional

HEARTBEAT_SECONDS = 60
GRACE_SECONDS = 300
OPEN_ATTEMPTS = 4  # (a database server: tries at opening a study that another process may be creating)


def optuna_module() -> Any:
    """Optuna, or a one-line error naming the extra that installs it."""
    try:
        import optuna
    except ImportError:
        raise ImportError(
            "Optuna is not installed: `pip install 'luke_allennlp[tune]'` (Optuna 4 or 5, and matplotlib for the plots)"
        ) from None
    return optuna


def quiet_optuna() -> Any:
    optuna = optuna_module()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    # (trials are asked for and told by hand, their heartbeats sent by `Search`: not from `Study.optimize`)
    warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")
    return optuna


def storage(url: str) -> Any:
    """Optuna's RDB storage of `url`, with heartbeats (a SQLite file waits for another process's write)."""
    optuna = quiet_optuna()
    engine_kwargs = {"connect_args": {"timeout": 120}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    return optuna.storages.RDBStorage(
        url, engine_kwargs=engine_kwargs, heartbeat_interval=HEARTBEAT_SECONDS, grace_period=GRACE_SECONDS
    )


def open_study(url: str, name: str, pruner: Any = None, sampler: Any = None, direction: Optional[str] = None) -> Any:
    """The study `name` in `url` (created with `direction` where that is given and it does not exist yet)."""
    optuna = quiet_optuna()
    from sqlalchemy.exc import IntegrityError, OperationalError

    for attempt in range(OPEN_ATTEMPTS):
        try:
            with sqlite_turn(url, "open"):
                if direction is None:
                    return optuna.load_study(study_name=name, storage=storage(url), pruner=pruner, sampler=sampler)
                return optuna.create_study(
                    storage=storage(url),
                    study_name=name,
                    direction=direction,
                    pruner=pruner,
                    sampler=sampler,
                    load_if_exists=True,
                )
        except (IntegrityError, OperationalError):
            if attempt + 1 == OPEN_ATTEMPTS or sqlite_file(url) is not None:  # (a SQLite file's turn rules out a race)
                raise
            time.sleep(random.uniform(0.5, 2.0))  # (another process's tables or study, made at the same moment)
    raise AssertionError("unreachable")


def sqlite_file(url: str) -> Optional[str]:
    """The file of a SQLite URL (None for another database, or SQLite in memory)."""
    prefix = "sqlite:///"
    return url[len(prefix) :] if url.startswith(prefix) and not url.endswith(":memory:") else None


@contextlib.contextmanager
def sqlite_turn(url: str, what: str) -> Iterator[None]:
    """A turn at `what` among the processes that share the SQLite file of `url` (a lock beside it; others: no lock)."""
    import fcntl

    path = sqlite_file(url)
    if path is None:
        yield
        return
    with open(f"{path}.{what}.lock", "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
