"""luke_allennlp/experiments/search_space.py: the Jsonnet search space of `allennlp tune`, checked against its config;
the shipped NER search space."""

import json

import optuna
import pytest

from luke_allennlp.experiments.search_space import SearchSpaceError, check_space, load_space, trial_config
from luke_allennlp.experiments.seeds import resolved_config
from tests.conftest import REPO_ROOT

CONFIG = {"trainer": {"optimizer": {"lr": 1e-5}, "validation_metric": "-loss"}, "model": {"dropout": 0.1}}


def test_the_ner_search_space_samples_settings_of_the_config(monkeypatch):
    for name in ("MODEL_NAME", "TRAIN_DATA_PATH", "VALIDATION_DATA_PATH"):
        monkeypatch.setenv(name, "unused")
    config = resolved_config(str(REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet"), None)
    space = load_space(str(REPO_ROOT / "configs" / "ner" / "conll2003_search.jsonnet"), config)
    assert (space.metric, space.direction) == ("f1", "maximize")
    assert space.pruner == {"type": "median", "n_startup_trials": 5, "n_warmup_steps": 1}
    study = optuna.create_study(direction=space.direction)
    seen = []
    for _ in range(3):
        trial = study.ask()
        study.sampler = space.sampler_for(trial.number)
        values = space.suggest(trial)
        seen.append(values)
        study.tell(trial, 0.5)
        assert 5e-6 <= values["trainer.optimizer.lr"] <= 5e-5 and values["data_loader.batch_sampler.batch_size"] in (
            8,
            16,
            32,
        )
        assert 3 <= values["trainer.num_epochs"] <= 6 and isinstance(values["trainer.num_epochs"], int)
        trained = trial_config(config, values, [{"type": "luke_optuna_pruning"}])
        assert trained["trainer"]["optimizer"]["lr"] == values["trainer.optimizer.lr"]
        assert trained["model"]["dropout"] == values["model.dropout"]
        assert trained["trainer"]["callbacks"] == [{"type": "luke_optuna_pruning"}]
        assert config["trainer"]["optimizer"]["lr"] == 1e-5 and not config["trainer"].get("callbacks")  # (a copy)
    assert len({json.dumps(values, sort_keys=True) for values in seen}) == 3
    # Each trial's own seed: trial 1 draws the same settings in any process.
    again = optuna.create_study(direction=space.direction)
    again.enqueue_trial(seen[0])
    again.tell(again.ask(), 0.5)
    trial = again.ask()
    again.sampler = space.sampler_for(trial.number)
    assert space.suggest(trial) == seen[1]


def test_metric_and_direction_default_to_the_trainers_validation_metric():
    space = check_space(
        "s.jsonnet", {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 0.5}}}, CONFIG
    )
    assert (space.metric, space.direction, space.sampler, space.pruner) == (
        "loss",
        "minimize",
        {"type": "tpe"},
        {"type": "median"},
    )
    grid = {
        "parameters": {"model.dropout": {"type": "categorical", "choices": [0.0, 0.1, 0.2]}},
        "sampler": {"type": "grid"},
    }
    assert check_space("s.jsonnet", grid, CONFIG).grid_size() == 3


@pytest.mark.parametrize(
    "space, message",
    [
        ({"parameters": {}}, "s.jsonnet: parameters must be a non-empty object"),
        (
            {"parameters": {"trainer.optimizer.lrr": {"type": "float", "low": 1e-6, "high": 1e-4}}},
            "s.jsonnet: parameters.trainer.optimizer.lrr: the config has no trainer.optimizer.lrr (a parameter names "
            "a setting of the config, as -o does; give it a value in the config or in -o first)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "uniform", "low": 0, "high": 1}}},
            's.jsonnet: parameters.model.dropout: type must be float, int or categorical, not "uniform"',
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1, "log": True}}},
            "s.jsonnet: parameters.model.dropout: a log distribution needs low > 0",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 1, "high": 0}}},
            "s.jsonnet: parameters.model.dropout: low (1) must not be above high (0)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "categorical", "choices": [{"a": 1}]}}},
            's.jsonnet: parameters.model.dropout: choice {"a": 1}: choices are numbers, strings, booleans or null '
            "(Optuna's categorical)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1, "steps": 2}}},
            "s.jsonnet: parameters.model.dropout: steps: not a key of a float parameter (its keys: high, log, low, step)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1}}, "sampler": {"type": "grid"}},
            "s.jsonnet: sampler: the grid sampler takes categorical parameters only (model.dropout is not)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1}}, "pruner": {"type": "asha"}},
            "s.jsonnet: pruner: type must be one of median, percentile, successive_halving, hyperband, threshold, "
            'none, not "asha"',
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1}}, "pruner": {"patience": 2}},
            "s.jsonnet: sampler or pruner: MedianPruner.__init__() got an unexpected keyword argument 'patience'",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1}}, "objective": "f1"},
            "s.jsonnet: objective: not a key of a search space (its keys: parameters, metric, direction, sampler, "
            "pruner)",
        ),
        (
            {"parameters": {"model.dropout": {"type": "float", "low": 0, "high": 1}}, "direction": "up"},
            's.jsonnet: direction must be maximize or minimize, not "up"',
        ),
    ],
)
def test_a_bad_search_space_is_one_line_naming_the_key(space, message):
    with pytest.raises(SearchSpaceError) as error:
        check_space("s.jsonnet", space, CONFIG)
    assert str(error.value) == message


def test_a_search_space_that_does_not_evaluate_names_its_file(tmp_path):
    space = tmp_path / "s.jsonnet"
    space.write_text("{ parameters: { a: }\n")
    with pytest.raises(SearchSpaceError, match=f"^{space}: STATIC ERROR: "):
        load_space(str(space), CONFIG)
