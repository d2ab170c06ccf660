"""
One config trained with several seeds (`allennlp seeds`), each in its own serialization directory `DIR/seed-S`.

Every seed the config has is varied: allennlp's `random_seed`, `numpy_seed` and `pytorch_seed` (set whether or not
the config names them) and every other key named `seed` or `*_seed` in the config (the pretraining reader's mask
seed, a sampler's), all to S; those of `validation_dataset_reader` are left as they are, so that every run is scored
on the same validation data. A component's seed that the config leaves out stays at its default: name it in the
config to have it varied.

The runs are resumable: `DIR/seeds.json` records the config (resolved, with `-o`) the seeds were started with, and a
later `allennlp seeds` on DIR with the same config keeps the finished runs (`metrics.json` and `model.tar.gz`
written), resumes an interrupted one from its last checkpoint (`allennlp train --recover`: bit-exact with the
project's trainer), starts again one stopped before its first checkpoint, and starts the seeds not yet run (more
seeds may be asked for later). Another config is refused, naming what differs (`-f` starts DIR over).
"""

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

ALLENNLP_SEEDS = ("random_seed", "numpy_seed", "pytorch_seed")
FIXED_SECTIONS = ("validation_dataset_reader",)  # the validation data: the same for every seed
PLAN_FILE = "seeds.json"
TRAINING_STATE = re.compile(r"training_state_e\d+_b\d+(_w\d+)?\.th")


class SeedsError(ValueError):
    """A seeds directory that does not fit the command (another config), or bad seeds."""

    user_error = True


def parse_seeds(text: str) -> List[int]:
    """`--seeds`: a count N (the seeds 1 to N) or a comma-separated list of seeds (`13,42,7`)."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SeedsError(f"--seeds {text}: give a number of seeds (5) or a comma-separated list (13,42,7)") from None
    if len(values) == 1 and "," not in text:
        if values[0] < 1:
            raise SeedsError(f"--seeds {text}: at least one seed")
        return list(range(1, values[0] + 1))
    if len(set(values)) != len(values) or not values:
        raise SeedsError(f"--seeds {text}: each seed once")
    return values


def _seed_paths(node: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}{key}"
            if path in FIXED_SECTIONS:
                continue
            if (key == "seed" or key.endswith("_seed")) and (value is None or type(value) is int):
                yield path
            else:
                yield from _seed_paths(value, path + ".")


def seed_overrides(config: Dict[str, Any], seed: int) -> Dict[str, int]:
    """The `-o` keys that give `config` (resolved) the seed `seed` (see the module's doc)."""
    paths = dict.fromkeys([*ALLENNLP_SEEDS, *_seed_paths(config)])
    return {path: seed for path in paths}


def run_name(seed: int) -> str:
    return f"seed-{seed}"


def digest(config: Dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode("utf-8")).hexdigest()


def _flat(node: Any, prefix: str = "") -> Dict[str, Any]:
    if isinstance(node, dict) and node:
        return {k: v for key, value in node.items() for k, v in _flat(value, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): node}


def differences(now: Dict[str, Any], before: Dict[str, Any], limit: int = 3) -> str:
    """The first settings that differ between two configs, each with both values."""
    a, b = _flat(now), _flat(before)
    missing = "(unset)"
    keys = [key for key in sorted(a.keys() | b.keys()) if a.get(key, missing) != b.get(key, missing)]
    shown = [f"{key}: {json.dumps(b.get(key, missing))} before, {json.dumps(a.get(key, missing))} now" for key in keys]
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return "; ".join(shown[:limit]) + more


def check_plan(directory: str, config_path: str, config: Dict[str, Any]) -> None:
    """Refuses a seeds directory started with another config; records this one in a new or empty directory."""
    from luke_allennlp.resources.output import replaced_output

    plan_file = os.path.join(directory, PLAN_FILE)
    if os.path.exists(plan_file):
        with open(plan_file, encoding="utf-8") as f:
            plan = json.load(f)
        if plan.get("digest") != digest(config):
            raise SeedsError(
                f"{directory} holds the seeds of another configuration ({plan.get('config_file')}): "
                f"{differences(config, plan.get('config', {}))}. Run with the same config and -o to resume, -f to "
                "start it over, or another -s"
            )
        return
    runs = [name for name in os.listdir(directory) if name.startswith("seed-")] if os.path.isdir(directory) else []
    if runs:
        raise SeedsError(
            f"{directory} holds runs ({', '.join(sorted(runs)[:3])}) but no {PLAN_FILE}: not a seeds directory of "
            "this command; pass -f to start it over, or choose another -s"
        )
    with replaced_output(plan_file) as temporary:
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"config_file": config_path, "digest": digest(config), "config": config}, f, indent=2)


@dataclass
class SeedRun:
    """One seed's run: where, and how `allennlp train` goes on with it (`state`: finished, recover, restart, new)."""

    seed: int
    directory: str
    state: str


def state_of(directory: str) -> str:
    """finished (metrics.json and model.tar.gz), recover (a training-state checkpoint), restart (something else:
    stopped before its first checkpoint) or new."""
    if not os.path.isdir(directory):
        return "new"
    names = set(os.listdir(directory)) - {".lock"}
    if {"metrics.json", "model.tar.gz"} <= names:
        return "finished"
    if any(TRAINING_STATE.fullmatch(name) for name in names):
        return "recover"
    return "restart" if names else "new"


def plan_runs(directory: str, seeds: Sequence[int]) -> List[SeedRun]:
    return [SeedRun(seed, path, state_of(path)) for seed in seeds for path in [os.path.join(directory, run_name(seed))]]


def describe(runs: Sequence[SeedRun]) -> str:
    counts: List[Tuple[str, int]] = [
        (state, sum(run.state == state for run in runs)) for state in ("finished", "recover", "restart", "new")
    ]
    words = {"finished": "finished (kept)", "recover": "to resume", "restart": "to start again", "new": "to start"}
    return ", ".join(f"{n} {words[state]}" for state, n in counts if n)


def resolved_config(config_file: str, overrides: Optional[str]) -> Dict[str, Any]:
    """The config as `allennlp train` would read it (Jsonnet evaluated with the environment, `-o` applied)."""
    from allennlp.common.params import Params

    return Params.from_file(config_file, overrides or "").as_dict(quiet=True)


def merged_overrides(overrides: Optional[str], extra: Dict[str, Any]) -> Dict[str, Any]:
    """The command's `-o` (JSON or Jsonnet) with `extra` (dotted keys) over it."""
    from allennlp.common.params import parse_overrides

    given: Dict[str, Any] = parse_overrides(overrides or "") if overrides else {}
    return {**given, **extra}
