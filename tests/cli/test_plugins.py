"""luke_allennlp/cli/plugins.py: plugin discovery from any directory."""

from tests.conftest import REPO_ROOT


def test_plugins_are_found_from_any_directory(tmp_path, monkeypatch):
    """Repair 10: outside the repository (no `.allennlp_plugins`) discovery still yields the installed plugin
    package; in the repository, after the file's plugins, whose `data_readers` it is an alias of."""
    from allennlp.common import plugins

    monkeypatch.setattr(plugins, "GLOBAL_PLUGINS_FILENAME", str(tmp_path / "no-global-plugins"))
    monkeypatch.chdir(tmp_path)
    assert list(plugins.discover_plugins()) == ["luke_allennlp_readers"]
    monkeypatch.chdir(REPO_ROOT)
    assert list(plugins.discover_plugins()) == ["luke_allennlp.plugin", "data_readers", "luke_allennlp_readers"]
    import luke_allennlp_readers

    import data_readers

    assert luke_allennlp_readers is data_readers  # one package: nothing registered twice
    # The real command run from elsewhere: tests/commands/test_export_luke_tasks.py runs `allennlp export-luke` in a
    # temporary directory.
