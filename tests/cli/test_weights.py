"""Every load of weights in allennlp reads weights only, whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says
(luke_allennlp/cli/weights.py): each function of allennlp that calls `torch.load` is replaced or runs under
`weights_only_loads`, and a crafted pickle (which creates a file when unpickled) runs nowhere."""

import ast
import os
import re
from pathlib import Path

import pytest

from luke_allennlp.cli.weights import WEIGHTS_ONLY_CALLS
from luke_allennlp.modeling.weights import WeightsError
from tests.crafted_archives import crafted, evil_pickle

REFUSED = "refused: it holds Python objects that are not weights (Unsupported global: GLOBAL io.open"
# allennlp's functions that the behaviour replaces by its own, which load through `load_weights`.
REPLACED = (
    "allennlp.nn.util:read_state_dict",
    "allennlp.nn.initializers:PretrainedModelInitializer.__init__",
    "allennlp.training.checkpointer:Checkpointer.load_checkpoint",
    "allennlp.training.gradient_descent_trainer:GradientDescentTrainer._load_model_state",
)


def torch_load_calls():
    """ "module:qualified function" of every call of `torch.load` in allennlp's installed source (its tests aside)."""
    import allennlp

    root = Path(allennlp.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "tests" in path.relative_to(root).parts or "load" not in text:
            continue
        module = ".".join(("allennlp", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__")

        def visit(node, scope, module=module):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    visit(child, (*scope, child.name), module)
                    continue
                call = child.func if isinstance(child, ast.Call) else None
                if isinstance(call, ast.Attribute) and call.attr == "load" and getattr(call.value, "id", "") == "torch":
                    found.add(f"{module}:{'.'.join(scope)}")
                visit(child, scope, module)

        visit(ast.parse(text), ())
    return found


def test_every_torch_load_of_allennlp_reads_weights_only():
    """The functions of allennlp that call `torch.load` are exactly those the behaviour replaces or wraps, and each
    is replaced once imported (a new call in another allennlp version fails here)."""
    import importlib

    assert torch_load_calls() == set(REPLACED) | set(WEIGHTS_ONLY_CALLS)
    for target in (*REPLACED, *WEIGHTS_ONLY_CALLS):
        module, _, qualified = target.partition(":")
        owner = importlib.import_module(module)
        for part in qualified.split("."):
            owner = getattr(owner, part)
        assert "luke_allennlp.cli.weights" in getattr(owner, "__luke_allennlp_compat__", ()), target


def test_no_other_load_runs_a_pickle(tiny_luke_dir, tmp_path, monkeypatch):
    """Issue 38: with TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, `PretrainedTransformerEmbedder`'s `override_weights_file`
    reached a bare `torch.load` in allennlp's `cached_transformers` and a crafted pickle ran. It, allennlp's tensor
    cache and FairScale's sharded checkpoints now refuse it, the file named."""
    from allennlp.common import cached_transformers
    from allennlp.common.file_utils import TensorCache
    from allennlp.nn.parallel.fairscale_fsdp_accelerator import FairScaleFsdpWrappedModel

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "code-ran.txt"
    evil = tmp_path / "override.th"
    evil.write_bytes(evil_pickle(marker))
    with pytest.raises(WeightsError, match=re.escape(f"{evil}: {REFUSED}")):
        cached_transformers.get(str(tiny_luke_dir), True, override_weights_file=str(evil))
    with pytest.raises(WeightsError, match=re.escape(f"{evil}: {REFUSED}")):
        FairScaleFsdpWrappedModel.consolidate_sharded_state([str(evil)])
    cache = TensorCache(str(tmp_path / "cache"))
    with cache.lmdb_env.begin(write=True) as transaction:  # (a cache file someone else wrote)
        transaction.put(b"key", evil.read_bytes())
    with pytest.raises(Exception, match="Unsupported global: GLOBAL io.open"):
        cache["key"]
    assert not marker.exists()
    import torch

    assert torch.load.__module__ == "torch.serialization"  # (put back after each call)


def test_a_bundled_override_weights_file_runs_no_pickle(trained_archive, tmp_path, monkeypatch):
    """The same through an archive whose `pretrained_transformer` embedder names a pickle inside it (a path the
    config may name): the load stops in one line naming the archive and its member."""
    from allennlp.models.archival import load_archive

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    marker = tmp_path / "code-ran.txt"
    where = "model.text_field_embedder.token_embedders.tokens"
    archive = crafted(
        trained_archive,
        tmp_path / "override.tar.gz",
        where,
        {"type": "pretrained_transformer", "model_name": "bundled/0-tiny", "override_weights_file": "evil.th"},
        manifest=lambda m: m["paths"].update(
            {f"{where}.model_name": "bundled/0-tiny", f"{where}.override_weights_file": "bundled/evil.th"}
        ),
        members={"bundled/evil.th": evil_pickle(marker)},
        weights=False,
    )
    with pytest.raises(WeightsError) as refused:
        load_archive(str(archive))
    assert str(refused.value).startswith(f"{archive} (its member {os.path.join('bundled', 'evil.th')}): {REFUSED}")
    assert not marker.exists()
