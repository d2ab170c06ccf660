"""The archives' extraction cache: once per content, one writer, bounded, refusing what extraction refuses."""

import io
import os
import tarfile
import threading
import time

import pytest

from luke_allennlp.resources import archive_cache
from luke_allennlp.resources.archives import ArchiveError, extract_archive


def make_archive(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("LUKE_ARCHIVE_CACHE", str(root))
    monkeypatch.setattr(archive_cache, "_HELD", {})  # (a fresh "process")
    yield root
    exit_process()


def exit_process():
    """What a process's exit does to the entries it used: their locks released."""
    for descriptor in archive_cache._HELD.values():
        os.close(descriptor)
    archive_cache._HELD.clear()


def counting(calls):
    def extract(archive, directory):
        calls.append(archive)
        time.sleep(0.05)  # (long enough for a second extraction to overlap)
        extract_archive(archive, directory)

    return extract


def test_an_archive_is_extracted_once_per_content(cache, tmp_path, monkeypatch):
    archive = make_archive(tmp_path / "model.tar.gz", {"config.json": b"{}", "weights.th": b"w" * 1000})
    calls = []
    first = archive_cache.cached_extraction(archive, counting(calls))
    assert first.parent == cache and (first / "weights.th").read_bytes() == b"w" * 1000
    exit_process()  # another process
    with monkeypatch.context() as patched:
        patched.setattr(archive_cache.hashlib, "sha256", None)  # an unchanged file is not hashed again
        assert archive_cache.cached_extraction(archive, counting(calls)) == first and len(calls) == 1
    time.sleep(0.01)
    make_archive(archive, {"config.json": b'{"changed": 1}'})  # the same name, other content
    second = archive_cache.cached_extraction(archive, counting(calls))
    assert second != first and len(calls) == 2 and (second / "config.json").read_bytes() == b'{"changed": 1}'
    assert oct(cache.stat().st_mode & 0o777) == "0o700"


def test_two_loads_at_once_extract_once(cache, tmp_path):
    archive = make_archive(tmp_path / "model.tar.gz", {"config.json": b"{}"})
    calls, results = [], []
    threads = [
        threading.Thread(target=lambda: results.append(archive_cache.cached_extraction(archive, counting(calls))))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(set(results)) == 1 and (results[0] / "config.json").is_file()
    assert [p.name for p in cache.iterdir() if p.name.startswith(".") and p.is_dir()] == []  # no half entry


def test_an_unsafe_archive_is_refused_and_nothing_is_cached(cache, tmp_path):
    archive = make_archive(tmp_path / "evil.tar.gz", {"../outside.txt": b"x"})
    with pytest.raises(ArchiveError, match="outside the extraction directory"):
        archive_cache.cached_extraction(archive, extract_archive)
    assert not (tmp_path / "outside.txt").exists()
    assert [p for p in cache.iterdir() if p.is_dir()] == []


def test_least_recently_used_entries_go_first_but_never_one_in_use(cache, tmp_path, monkeypatch):
    archives = [make_archive(tmp_path / f"m{i}.tar.gz", {"w": bytes([i]) * 4000}) for i in range(3)]
    entries = []
    for archive in archives:
        entries.append(archive_cache.cached_extraction(archive, extract_archive))
        exit_process()  # each loaded by a process that has exited
        time.sleep(0.02)
    in_use = os.open(cache / f"{entries[0].name}.lock", os.O_RDWR)
    archive_cache._flock(in_use, exclusive=False)  # another process still runs with the oldest
    monkeypatch.setenv("LUKE_ARCHIVE_CACHE_MAX_BYTES", "5K")
    archive_cache.cached_extraction(archives[2], extract_archive)
    assert [entry.exists() for entry in entries] == [True, False, True]  # the middle one: oldest not in use
    os.close(in_use)
    assert archive_cache.evict(cache, limit=0) == [entries[0]]  # (`clear`): all but the ones in use
    assert archive_cache.main(["clear"]) == 0


def test_off_extracts_to_a_temporary_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("LUKE_ARCHIVE_CACHE", "off")
    assert archive_cache.cached_extraction(make_archive(tmp_path / "a.tar.gz", {"c": b""}), extract_archive) is None


def test_a_cached_archive_s_config_is_checked_at_every_load(cache, tmp_path, monkeypatch):
    """The cache holds the extracted files; the checks on the loaded config still run at each load."""
    from luke_allennlp import archival
    from luke_allennlp.resources import archive_config

    archive = make_archive(tmp_path / "model.tar.gz", {"config.json": b'{"model": {"type": "x"}}'})
    checked, loaded = [], []
    monkeypatch.setattr(archive_config, "check_archive_config", lambda config, *args, **kwargs: checked.append(config))
    monkeypatch.setattr(archival, "_build", lambda config, directory, *args: loaded.append(directory))
    for _ in range(2):
        archival.load_archive(str(archive))
    assert checked == [{"model": {"type": "x"}}] * 2
    assert loaded[0] == loaded[1] and loaded[0].startswith(str(cache))
