"""
The study's storage, shared by the processes of a search (`allennlp tune`, and the `luke_optuna_pruning` callback of
each trial's training): Optuna's RDB storage of a URL (a SQLite file waits for another process's write; a database
server's connections are checked before use), with heartbeats so that the trials of a killed process are failed.
"""

import warnings
from typing import Any, Optional

HEARTBEAT_SECONDS = 60
GRACE_SECONDS = 300


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
    if direction is None:
        return optuna.load_study(study_name=name, storage=storage(url), pruner=pruner, sampler=sampler)
    return optuna.create_study(
        storage=storage(url), study_name=name, direction=direction, pruner=pruner, sampler=sampler, load_if_exists=True
    )
