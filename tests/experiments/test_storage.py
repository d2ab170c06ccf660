"""Several processes opening one new study at the same moment (two `allennlp tune` started together): Optuna makes
the tables and the study without a guard, so without the turn beside the SQLite file some of them failed ("table
studies already exists", a UNIQUE constraint)."""

import multiprocessing

import optuna
import pytest
from sqlalchemy.exc import OperationalError

from luke_allennlp.experiments import storage

PROCESSES = 6


def _open(url, barrier, results):
    barrier.wait()  # (all at once)
    try:
        storage.open_study(url, "search", direction="minimize")
        results.put("ok")
    except Exception as e:  # noqa: BLE001 (reported to the test)
        results.put(f"{type(e).__name__}: {e}"[:200])


@pytest.mark.parametrize("round_", range(3))
def test_processes_creating_one_sqlite_study_at_once_all_open_it(tmp_path, round_):
    url = f"sqlite:///{tmp_path}/study.db"
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(PROCESSES), context.Queue()
    processes = [context.Process(target=_open, args=(url, barrier, results)) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [results.get(timeout=10) for _ in processes] == ["ok"] * PROCESSES
    assert optuna.get_all_study_names(storage=url) == ["search"]


def test_a_database_server_is_tried_again_when_another_process_made_the_study_first(monkeypatch):
    made = []

    def create_study(**kwargs):
        made.append(kwargs["study_name"])
        if len(made) == 1:
            raise OperationalError("CREATE TABLE studies", {}, Exception("relation studies already exists"))
        return "the study"

    monkeypatch.setattr(storage, "storage", lambda url: None)
    monkeypatch.setattr(optuna, "create_study", create_study)
    monkeypatch.setattr(storage.time, "sleep", lambda seconds: None)
    assert storage.open_study("postgresql://db/optuna", "search", direction="minimize") == "the study"
    assert made == ["search", "search"]


def test_a_sqlite_error_is_not_hidden_by_trying_again(tmp_path, monkeypatch):
    def create_study(**kwargs):
        raise OperationalError("INSERT", {}, Exception("disk I/O error"))

    monkeypatch.setattr(optuna, "create_study", create_study)
    monkeypatch.setattr(storage, "storage", lambda url: None)
    with pytest.raises(OperationalError, match="disk I/O error"):
        storage.open_study(f"sqlite:///{tmp_path}/study.db", "search", direction="minimize")
