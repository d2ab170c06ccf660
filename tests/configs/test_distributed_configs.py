"""
Every fine-tuning config in configs/ trains 2 epochs under DistributedDataParallel (two gloo processes on the CPU),
without `find_unused_parameters`: tiny checkpoints, a few instances, and for SQuAD with entity inputs windows with
and windows without entities. The two processes start once and train the configs one after the other in process
(allennlp's `TrainModel`, as `allennlp train` runs it in each distributed worker).
"""

import hashlib
import json
import math
from datetime import timedelta
from typing import Any, Dict, List

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.common import Params
from allennlp.data import Instance, Vocabulary
from allennlp.data.fields import TensorField
from allennlp.models import Model
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.util import make_vocab_from_params

from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modules.token_embedders import LukeEmbedder
from tests.configs import test_configs, test_entity_disambiguation_configs, test_jglue_configs
from tests.conftest import REPO_ROOT, set_config_env

FINE_TUNING = (
    test_configs.CONFIGS
    + test_entity_disambiguation_configs.CONFIGS
    + sorted(test_jglue_configs.CONFIGS.glob("*.jsonnet"))
)
# One step per batch (the mLUKE configs accumulate 16 and 8 batches: a step an epoch, the last at learning rate 0).
TINY = {
    "trainer.num_epochs": 2,
    "data_loader.batch_sampler.batch_size": 4,
    "dataset_reader.max_instances": 16,
    "dataset_reader.max_seq_length": 64,
    "trainer.num_gradient_accumulation_steps": 1,
    "trainer.callbacks": [{"type": "test_epoch_digest"}],
}
TINY_ED = {
    "dataset_reader.max_seq_length": 128,
    "validation_dataset_reader.max_seq_length": 128,
    "validation_dataset_reader.max_instances": 4,
}
# Data whose two processes' shares hold equal numbers of batches (the German sample's two documents do not).
EQUAL_SHARES = {"conll_multilingual": "conll_slice"}
EPOCHS: List[Dict[str, Any]] = []  # what `EpochDigest` saw in this process


@TrainerCallback.register("test_epoch_digest")
class EpochDigest(TrainerCallback):
    """Records a digest of the weights before training (as epoch -1) and at the end of each epoch, with its metrics."""

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        EPOCHS.append({"epoch": -1, "weights": weights_digest(trainer.model), "metrics": {}})

    def on_epoch(self, trainer, metrics: Dict[str, Any], epoch: int, is_primary: bool = True, **kwargs) -> None:
        EPOCHS.append({"epoch": epoch, "weights": weights_digest(trainer.model), "metrics": dict(metrics)})


def weights_digest(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode() + tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def count_entity_rows(model: torch.nn.Module, counts: Dict[str, int]) -> None:
    """Counts the rows (windows, sentences) that the model's LUKE encoders train on with and without entities."""
    from luke_allennlp.modeling import LukeEncoder

    def hook(module, args, kwargs) -> None:
        if module.training:
            inputs = args[0]  # (the project's code passes `LukeInputs`)
            rows = inputs.input_ids.size(0)
            mask = inputs.entity_attention_mask
            with_entities = 0 if mask is None or mask.size(1) == 0 else int(mask.bool().any(-1).sum())
            counts["with"] += with_entities
            counts["without"] += rows - with_entities

    for module in model.modules():
        if isinstance(module, LukeEncoder):  # (every task model's encoder runs through `LukeEncoder.forward`)
            module.register_forward_pre_hook(hook, with_kwargs=True)


def train_configs(rank: int, runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    from allennlp.commands.train import TrainModel

    results = {}
    for run in runs:
        params = Params(json.loads(json.dumps(run["params"])))
        params.pop("evaluation", None)  # as allennlp's train_model: for `allennlp evaluate`
        params.pop("paper", None)  # as prepare_environment (luke_allennlp.cli.paper_figures): for `allennlp seeds`
        params["trainer"].update({"local_rank": rank, "cuda_device": -1, "world_size": 2, "distributed": True})
        train_loop = TrainModel.from_params(params=params, serialization_dir=run["dir"], local_rank=rank)
        counts = {"with": 0, "without": 0}
        count_entity_rows(train_loop.model, counts)
        del EPOCHS[:]
        dist.barrier()
        metrics = train_loop.run()
        if rank == 0:
            train_loop.finish(metrics)  # the archive, as `allennlp train` writes it
        validation = "validation_" + run["params"]["trainer"]["validation_metric"].lstrip("+-")
        results[run["name"]] = {
            "epochs": list(EPOCHS),
            "entity_rows": counts,
            "metrics": metrics,
            "validation": metrics.get(validation),
        }
    return results


class EntityProbe(Model):
    """A `luke` embedder and a loss over its word states; with `use_entities` 0 the batch's entity inputs have no
    entity (width 0), as an entity disambiguation batch without mentions: the entity side is not used."""

    def __init__(self, model_name: str) -> None:
        super().__init__(Vocabulary())
        self.embedder = LukeEmbedder(model_name, entity_vocab="task")

    def forward(self, word_ids, entity_ids, use_entities) -> Dict[str, torch.Tensor]:  # type: ignore[override]
        if not bool(use_entities.all()):
            entity_ids = entity_ids[:, :0]
        positions = entity_ids.new_zeros(*entity_ids.shape, 1) + 1  # each entity over the first word
        inputs = LukeInputs(word_ids, entity_ids=entity_ids, entity_position_ids=positions)
        words = self.embedder.encode(inputs).last_hidden_state
        return {"loss": words.pow(2).mean()}


def train_mixed_entity_batches(rank: int, model_name: str) -> Dict[str, Any]:
    """Process 0's batches have entities, process 1's none: the entity-aware query matrices are used in one
    process only. Two optimizer steps with the `luke_gradient_descent` trainer under DDP."""
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.nn.parallel import TorchDdpAccelerator
    from allennlp.training.trainer import Trainer

    torch.manual_seed(0)
    model = EntityProbe(model_name)
    g = torch.Generator().manual_seed(rank)

    def fields() -> Dict[str, TensorField]:
        return {
            "word_ids": TensorField(torch.randint(3, 100, (6,), generator=g)),
            "entity_ids": TensorField(torch.tensor([1, 2])),
            "use_entities": TensorField(torch.tensor(rank == 0)),
        }

    config = {
        "type": "luke_gradient_descent",
        "num_epochs": 1,
        "cuda_device": -1,
        "checkpointer": None,
        "optimizer": {"type": "luke_adamw", "lr": 0.01},
    }
    loader = SimpleDataLoader([Instance(fields()) for _ in range(4)], 2)
    trainer = Trainer.from_params(
        Params(config),
        model=model,
        serialization_dir=None,
        data_loader=loader,
        distributed=True,
        local_rank=rank,
        world_size=2,
        ddp_accelerator=TorchDdpAccelerator(cuda_device=-1),
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainer.train()
    moved = sorted(n for n, p in model.named_parameters() if not torch.equal(p, before[n]))
    return {"weights": weights_digest(model), "moved": moved}


def worker(rank: int, init_file: str, runs: List[Dict[str, Any]], model_name: str, queue) -> None:
    # A process that fails leaves the other waiting in a collective: the timeout ends it.
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=2, timeout=timedelta(seconds=120)
    )
    try:
        results = train_configs(rank, runs)
        results["mixed_entity_batches"] = train_mixed_entity_batches(rank, model_name)
        queue.put((rank, results))
    except BaseException as error:
        queue.put((rank, f"{type(error).__name__}: {error}"))
        raise
    finally:
        dist.destroy_process_group()


@pytest.fixture(scope="module")
def squad_sparse_mentions(tmp_path_factory) -> str:
    """A mention dictionary whose only name, "Roman numerals", occurs in one question of squad_slice: SQuAD batches
    with entities and batches without."""
    path = tmp_path_factory.mktemp("squad-sparse") / "mention_dictionary.json"
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "dump": "handwritten",
                "min_link_probability": 0.0,
                "pages": {"Super Bowl 50": {"Roman numerals": "Super Bowl XLIX"}},
                "link_probability": {"Roman numerals": 1.0},
                "stats": {},
            }
        )
    )
    return str(path)


def config_params(config, monkeypatch, request, squad_mentions: str, tmp_path) -> Dict[str, Any]:
    if config.parent.name == "entity_disambiguation":
        fixture, key = test_entity_disambiguation_configs.DATA[config.stem]
        data = request.getfixturevalue(fixture)
        set_config_env(monkeypatch, data["model"], data[key])
        monkeypatch.setenv("MENTION_DICTIONARY", str(request.getfixturevalue("ed_wikipedia")["dictionary"]))
        overrides = {**TINY, **TINY_ED}
    elif config.parent.name == "jglue":  # the real JGLUE files' slices (MARC-ja: lines in its documented format)
        train, valid = test_jglue_configs.data_for(config.stem.removesuffix("_entities"), tmp_path)
        set_config_env(monkeypatch, request.getfixturevalue(test_jglue_configs.JAPANESE_CHECKPOINT), train)
        monkeypatch.setenv("VALIDATION_DATA_PATH", str(valid))
        overrides = TINY
        if config.stem.endswith("_entities"):  # entity inputs: names of the JGLUE lines, a vocabulary that fits
            from tests.jglue import write_mention_dictionary

            mentions, vocab = write_mention_dictionary(tmp_path / "mentions")
            monkeypatch.setenv("MENTION_DICTIONARY", str(mentions))
            overrides = {**TINY, "dataset_reader.entity_vocab": str(vocab)}
    else:
        model = next((v for k, v in test_configs.MODELS if k in config.name), "tiny_luke_dir")
        data = next(v for k, v in {**test_configs.DATA, **EQUAL_SHARES}.items() if config.name.startswith(k))
        set_config_env(monkeypatch, request.getfixturevalue(model), request.getfixturevalue(data))
        monkeypatch.setenv("MENTION_DICTIONARY", squad_mentions)
        overrides = TINY
    return Params.from_file(str(config), params_overrides=json.dumps(overrides))


def with_vocabulary(params: Params, serialization_dir: str) -> Dict[str, Any]:
    """As `allennlp train` does before it starts the processes (each reads only its share of the data): the
    vocabulary built from all the data, written to `serialization_dir`, which the processes then read."""
    vocab = make_vocab_from_params(params.duplicate(), serialization_dir)
    params["vocabulary"] = {
        "type": "from_files",
        "directory": f"{serialization_dir}/vocabulary",
        "padding_token": vocab._padding_token,
        "oov_token": vocab._oov_token,
    }
    return params.as_dict(quiet=True)


@pytest.fixture(scope="module")
def trained(request, tmp_path_factory, squad_sparse_mentions, tiny_luke_dir) -> List[Dict[str, Any]]:
    root = tmp_path_factory.mktemp("ddp-configs")
    runs = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        for config in FINE_TUNING:
            name = str(config.relative_to(REPO_ROOT / "configs"))
            data_dir = root / "data" / config.stem
            data_dir.mkdir(parents=True)
            params = config_params(config, monkeypatch, request, squad_sparse_mentions, data_dir)
            directory = str(root / name.replace("/", "_"))
            runs.append({"name": name, "params": with_vocabulary(params, directory), "dir": directory})
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=worker, args=(rank, str(root / "init"), runs, str(tiny_luke_dir), queue))
        for rank in range(2)
    ]
    for process in processes:
        process.start()
    results = dict(queue.get(timeout=600) for _ in processes)
    for process in processes:
        process.join(timeout=60)
    assert not any(isinstance(r, str) for r in results.values()), results
    assert all(process.exitcode == 0 for process in processes)
    return [results[0], results[1]]


def test_every_fine_tuning_config_trains_two_epochs_under_ddp(trained):
    first, second = trained
    names = sorted(str(c.relative_to(REPO_ROOT / "configs")) for c in FINE_TUNING)
    assert sorted(first) == sorted(second) == sorted([*names, "mixed_entity_batches"])
    for name in names:
        epochs = [first[name]["epochs"], second[name]["epochs"]]
        assert [[e["epoch"] for e in process] for process in epochs] == [[-1, 0, 1], [-1, 0, 1]], name
        for a, b in zip(*epochs):
            assert a["weights"] == b["weights"], name  # the processes start and stay in step
        # and train (a run of one step an epoch ends at learning rate 0: its last step changes nothing)
        assert epochs[0][0]["weights"] != epochs[0][1]["weights"], name
        metrics = first[name]["metrics"]
        # (The first rows of the tiny Wikipedia corpus hold only mentions whose gold entity is their one candidate.)
        least = 0.0 if name == "entity_disambiguation/wikipedia.jsonnet" else 1e-6
        assert math.isfinite(metrics["training_loss"]) and metrics["training_loss"] >= least, name
        assert metrics["epoch"] == 1 and metrics["training_loss"] == second[name]["metrics"]["training_loss"], name
        value = first[name]["validation"]  # the config's validation metric, the same in both processes
        assert value is not None and math.isfinite(value) and value == second[name]["validation"], name


def test_squad_trains_on_windows_with_and_without_entities(trained):
    rows = [process["reading_comprehension/squad.jsonnet"]["entity_rows"] for process in trained]
    assert sum(r["with"] for r in rows) > 0 and sum(r["without"] for r in rows) > 0, rows


def test_entity_side_used_in_one_process_only(trained):
    first, second = (process["mixed_entity_batches"] for process in trained)
    assert first["weights"] == second["weights"]
    # Process 1 never used the entity-aware queries, yet they moved with process 0's gradient in both processes;
    # the pooler stays frozen.
    assert first["moved"] == second["moved"]
    assert {f"embedder.luke.encoder.layer.0.attention.self.{q}_query.weight" for q in ("w2e", "e2w", "e2e")} <= set(
        first["moved"]
    )
    assert not any(".pooler." in name for name in first["moved"])
