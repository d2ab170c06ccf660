"""
A hyperparameter search space for `allennlp tune`, written in Jsonnet beside the config it searches (e.g.
`configs/ner/conll2003_search.jsonnet`). It evaluates (with the environment's variables as `std.extVar`s) to:

    {
      // What the search optimises: the validation metric of the trainer's epochs (optional; default the config's
      // trainer.validation_metric, e.g. "+f1": f1, maximize). Each epoch reports `validation_<metric>` to the
      // trial (for pruning); the trial's value is the run's `best_validation_<metric>` (metrics.json).
      metric: 'f1',
      direction: 'maximize',  // or 'minimize'
      // Each searched setting: its path in the config, as `-o` writes it, and its distribution.
      parameters: {
        'trainer.optimizer.lr': { type: 'float', low: 5e-6, high: 5e-5, log: true },
        'trainer.optimizer.weight_decay': { type: 'float', low: 0.0, high: 0.1, step: 0.01 },
        'trainer.num_epochs': { type: 'int', low: 2, high: 5 },  // (also `step`, `log`)
        'data_loader.batch_sampler.batch_size': { type: 'categorical', choices: [8, 16, 32] },
      },
      // Optional: how trials are drawn, and when one is stopped early (Optuna's samplers and pruners).
      sampler: { type: 'tpe', seed: 13 },  // tpe (default), random, grid (categorical parameters only)
      pruner: { type: 'median', n_startup_trials: 5, n_warmup_steps: 1 },  // median (default), percentile,
                                                                            // successive_halving, hyperband,
                                                                            // threshold, none
    }

`float` takes `low`, `high`, and `log` or `step`; `int` takes `low`, `high`, and `step` or `log`; `categorical`
takes `choices` (numbers, strings, booleans, null). A sampler's and a pruner's other keys are the keyword arguments
of Optuna's class (`TPESampler`, `MedianPruner`, ...). A sampler's `seed` gives every trial its own seed
(seed + the trial's number), so that processes sharing a study draw different settings, reproducibly.
"""

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

DISTRIBUTIONS = {
    "float": {"low", "high", "log", "step"},
    "int": {"low", "high", "log", "step"},
    "categorical": {"choices"},
}
SAMPLERS = {"tpe": "TPESampler", "random": "RandomSampler", "grid": "GridSampler"}
PRUNERS = {
    "median": "MedianPruner",
    "percentile": "PercentilePruner",
    "successive_halving": "SuccessiveHalvingPruner",
    "hyperband": "HyperbandPruner",
    "threshold": "ThresholdPruner",
    "none": "NopPruner",
}
DIRECTIONS = ("maximize", "minimize")


class SearchSpaceError(ValueError):
    """A search space that cannot be searched, with the file and key."""

    user_error = True


@dataclass
class SearchSpace:
    """A checked search space: `parameters` (path -> distribution), the metric (without sign) and direction, the
    sampler's and pruner's specs (`{"type": ..., keyword arguments}`)."""

    file: str
    parameters: Dict[str, Dict[str, Any]]
    metric: str
    direction: str
    sampler: Dict[str, Any]
    pruner: Dict[str, Any]

    def as_dict(self) -> Dict[str, Any]:
        return {
            "parameters": self.parameters,
            "metric": self.metric,
            "direction": self.direction,
            "sampler": self.sampler,
            "pruner": self.pruner,
        }

    def suggest(self, trial: Any) -> Dict[str, Any]:
        """The trial's values: path -> value (Optuna's `suggest_*`, each parameter named by its path)."""
        values = {}
        for path, spec in self.parameters.items():
            if spec["type"] == "categorical":
                values[path] = trial.suggest_categorical(path, spec["choices"])
            elif spec["type"] == "int":
                values[path] = trial.suggest_int(
                    path, spec["low"], spec["high"], step=spec.get("step", 1), log=spec.get("log", False)
                )
            else:
                values[path] = trial.suggest_float(
                    path, spec["low"], spec["high"], step=spec.get("step"), log=spec.get("log", False)
                )
        return values

    def sampler_for(self, trial_number: Optional[int] = None) -> Any:
        """Optuna's sampler (for trial `trial_number`: seeded with seed + number where the spec has a seed)."""
        import optuna

        spec = dict(self.sampler)
        kind = spec.pop("type")
        if kind == "grid":  # (every process orders the grid alike: trial n takes its n-th point)
            spec["seed"] = spec.get("seed") or 0
            return optuna.samplers.GridSampler({p: s["choices"] for p, s in self.parameters.items()}, **spec)
        if spec.get("seed") is not None and trial_number is not None:
            spec["seed"] = spec["seed"] + trial_number
        return getattr(optuna.samplers, SAMPLERS[kind])(**spec)

    def make_pruner(self) -> Any:
        return make_pruner(self.pruner)

    def grid_size(self) -> Optional[int]:
        """The number of points of a grid search (None for the other samplers)."""
        if self.sampler["type"] != "grid":
            return None
        size = 1
        for spec in self.parameters.values():
            size *= len(spec["choices"])
        return size


def make_pruner(spec: Dict[str, Any]) -> Any:
    """Optuna's pruner of a spec (`{"type": "median", ...keyword arguments}`)."""
    import optuna

    arguments = dict(spec)
    return getattr(optuna.pruners, PRUNERS[arguments.pop("type")])(**arguments)


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise SearchSpaceError(f"{where}: {message}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_parameter(where: str, spec: Any) -> Dict[str, Any]:
    _require(isinstance(spec, dict), where, "expected an object with a 'type' (float, int or categorical)")
    kind = spec.get("type")
    _require(kind in DISTRIBUTIONS, where, f"type must be float, int or categorical, not {json.dumps(kind)}")
    unknown = sorted(set(spec) - DISTRIBUTIONS[kind] - {"type"})
    _require(
        not unknown,
        where,
        f"{unknown[0] if unknown else ''}: not a key of a {kind} parameter "
        f"(its keys: {', '.join(sorted(DISTRIBUTIONS[kind]))})",
    )
    if kind == "categorical":
        choices = spec.get("choices")
        _require(isinstance(choices, list) and len(choices) > 0, where, "choices must be a non-empty list")
        for choice in choices:
            _require(
                choice is None or isinstance(choice, (bool, int, float, str)),
                where,
                f"choice {json.dumps(choice)}: choices are numbers, strings, booleans or null (Optuna's categorical)",
            )
        return dict(spec)
    low, high = spec.get("low"), spec.get("high")
    _require(_number(low) and _number(high), where, f"a {kind} parameter needs numbers 'low' and 'high'")
    if kind == "int":
        _require(isinstance(low, int) and isinstance(high, int), where, "an int parameter's low and high are integers")
    _require(low <= high, where, f"low ({low}) must not be above high ({high})")
    log, step = spec.get("log", False), spec.get("step")
    _require(isinstance(log, bool), where, "log is true or false")
    _require(step is None or (_number(step) and step > 0), where, "step must be a positive number")
    _require(not (log and step not in (None, 1)), where, "log and step do not go together")
    _require(not log or low > 0, where, "a log distribution needs low > 0")
    return dict(spec)


def _check_spec(where: str, spec: Any, kinds: Dict[str, str], default: str) -> Dict[str, Any]:
    spec = {"type": default} if spec is None else spec
    _require(isinstance(spec, dict), where, "expected an object with a 'type'")
    spec = {"type": default, **spec}
    _require(spec["type"] in kinds, where, f"type must be one of {', '.join(kinds)}, not {json.dumps(spec['type'])}")
    return spec


def check_space(file: str, space: Any, config: Dict[str, Any]) -> SearchSpace:
    """A search space (the evaluated Jsonnet of `file`) checked against `config` (resolved): every key known, every
    parameter's path naming a setting of the config, the metric and direction given or taken from the config."""
    _require(isinstance(space, dict), file, "a search space is an object with 'parameters'")
    unknown = sorted(set(space) - {"parameters", "metric", "direction", "sampler", "pruner"})
    _require(
        not unknown,
        file,
        f"{unknown[0] if unknown else ''}: not a key of a search space "
        "(its keys: parameters, metric, direction, sampler, pruner)",
    )
    parameters = space.get("parameters")
    _require(isinstance(parameters, dict) and len(parameters) > 0, file, "parameters must be a non-empty object")
    checked = {}
    for path, spec in parameters.items():
        where = f"{file}: parameters.{path}"
        checked[path] = _check_parameter(where, spec)
        missing = missing_path(config, path)
        _require(
            missing is None,
            where,
            f"the config has no {missing} (a parameter names a setting of the config, "
            "as -o does; give it a value in the config or in -o first)",
        )
    validation_metric = (config.get("trainer") or {}).get("validation_metric", "-loss")
    validation_metric = validation_metric[0] if isinstance(validation_metric, list) else validation_metric
    metric = space.get("metric", validation_metric.lstrip("+-"))
    _require(isinstance(metric, str) and bool(metric), file, "metric must be the name of a validation metric")
    metric = metric.lstrip("+-")
    default_direction = "minimize" if validation_metric.startswith("-") and "metric" not in space else "maximize"
    direction = space.get("direction", default_direction)
    _require(direction in DIRECTIONS, file, f"direction must be maximize or minimize, not {json.dumps(direction)}")
    sampler = _check_spec(f"{file}: sampler", space.get("sampler"), SAMPLERS, "tpe")
    if sampler["type"] == "grid":
        kinds = {path: spec["type"] for path, spec in checked.items() if spec["type"] != "categorical"}
        _require(
            not kinds,
            f"{file}: sampler",
            f"the grid sampler takes categorical parameters only ({next(iter(kinds), '')} is not)",
        )
    pruner = _check_spec(f"{file}: pruner", space.get("pruner"), PRUNERS, "median")
    space = SearchSpace(file, checked, metric, direction, sampler, pruner)
    try:
        space.sampler_for(None), space.make_pruner()
    except (TypeError, ValueError) as error:
        raise SearchSpaceError(f"{file}: sampler or pruner: {error}") from None
    return space


def missing_path(config: Dict[str, Any], path: str) -> Optional[str]:
    """The first part of the dotted `path` that `config` lacks (None: it names a setting)."""
    node: Any = config
    parts = path.split(".")
    for i, part in enumerate(parts):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return ".".join(parts[: i + 1])
    return None


def set_path(config: Dict[str, Any], path: str, value: Any) -> None:
    """Sets the setting at the dotted `path` (one that exists) of `config` in place."""
    node: Any = config
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def load_space(file: str, config: Dict[str, Any]) -> SearchSpace:
    """The search space of a Jsonnet (or JSON) file, checked against `config` (resolved)."""
    import _jsonnet
    from allennlp.common.params import _environment_variables

    if not os.path.isfile(file):
        raise FileNotFoundError(f"search space {file} not found")
    try:
        space = json.loads(_jsonnet.evaluate_file(file, ext_vars=_environment_variables()))
    except RuntimeError as error:
        raise SearchSpaceError(f"{file}: {str(error).splitlines()[0]}") from None
    return check_space(file, space, config)


def trial_config(
    config: Dict[str, Any], values: Dict[str, Any], callbacks: List[Dict[str, Any]] = ()
) -> Dict[str, Any]:
    """`config` (resolved) with a trial's `values` set, and `callbacks` added to the trainer's."""
    result = json.loads(json.dumps(config))
    for path, value in values.items():
        set_path(result, path, value)
    if callbacks:
        trainer = result.setdefault("trainer", {})
        trainer["callbacks"] = list(trainer.get("callbacks") or []) + list(callbacks)
    return result
