"""The host-sync audit folded into the config smoke tests: their overrides with `audit()`, and a training run fails
when a step without a report would make the host wait for a GPU (see luke_allennlp/training/trainers/sync_audit.py)."""

from typing import Any, Dict, Sequence

from allennlp.training.callbacks import TrainerCallback


def audit(allowed: Sequence[str] = ()) -> Dict[str, Any]:
    """Overrides that audit every training step; `allowed`: files whose syncs are known and left (named with why
    where this is called), every other sync fails the run."""
    return {
        "trainer.audit_host_syncs": True,
        "trainer.callbacks": [{"type": "test_no_host_syncs", "allowed": list(allowed)}],
    }


AUDIT = audit()


@TrainerCallback.register("test_no_host_syncs")
class NoHostSyncs(TrainerCallback):
    def __init__(self, serialization_dir: str, allowed: Sequence[str] = ()) -> None:
        super().__init__(serialization_dir)
        self.allowed = tuple(allowed)

    def on_end(self, trainer, metrics=None, epoch=None, is_primary=True, **kwargs) -> None:
        counts = trainer.host_sync_counts
        assert counts, "no step was audited"
        quiet = {step for step, reported, _ in counts if not reported}
        unexpected = {
            step: [e for e in events if e.split(" at ")[-1].split(":")[0] not in self.allowed]
            for step, events in trainer.host_sync_events
            if step in quiet
        }
        unexpected = {step: events for step, events in unexpected.items() if events}
        assert not unexpected, f"host syncs on steps without a report: {unexpected}"
        if self.allowed:  # what is allowed is still there (else the list is stale)
            seen = {e.split(" at ")[-1].split(":")[0] for _, events in trainer.host_sync_events for e in events}
            assert set(self.allowed) <= seen, f"allowed but gone: {sorted(set(self.allowed) - seen)}"
