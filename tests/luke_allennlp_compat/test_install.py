"""luke_allennlp_compat/hook.py: `install(hooks)` runs a project's hooks around the module they name, after the
layer's own repairs, each given once; one given after the module was imported runs at once."""

import sys

from luke_allennlp_compat import hook as compat_hook


def test_hooks_run_around_the_module_they_name(tmp_path, monkeypatch):
    (tmp_path / "entry_hooked_target.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(compat_hook, "_HOOKS", {name: list(hooks) for name, hooks in compat_hook._HOOKS.items()})
    monkeypatch.delitem(sys.modules, "entry_hooked_target", raising=False)
    calls = []

    def before(module):
        calls.append(("before", hasattr(module, "X")))

    def after(module):
        calls.append(("after", module.X))

    hooks = {"entry_hooked_target": [("before", before), ("after", after)]}
    compat_hook.install(hooks)
    compat_hook.install(hooks)  # given twice: added once
    import entry_hooked_target

    assert calls == [("before", False), ("after", 1)]
    assert len(compat_hook._HOOKS["entry_hooked_target"]) == 2

    def late(module):
        calls.append(("late", module.X))

    compat_hook.install({"entry_hooked_target": [("after", late)]})
    assert calls[-1] == ("late", 1)
    del entry_hooked_target
    sys.modules.pop("entry_hooked_target")
