"""luke_allennlp/cli/interruptions.py: a signal remembered until the command ends (tests/cli/test_user_errors.py runs
it through `allennlp train`)."""

import signal

import pytest
from allennlp.common.util import SigTermReceived

from luke_allennlp.cli import interruptions


def test_a_recorded_signal_is_raised_again_until_cleared():
    interruptions.clear()
    interruptions.raise_pending()  # nothing pending: nothing raised
    first = interruptions.record(signal.SIGTERM)
    interruptions.record(signal.SIGHUP)  # the first signal is the one that stops the command
    assert isinstance(first, SigTermReceived) and first.signum == signal.SIGTERM
    assert interruptions.pending() == signal.SIGTERM
    with pytest.raises(SigTermReceived) as again:
        interruptions.raise_pending()
    assert again.value.signum == signal.SIGTERM and type(again.value) is type(first)
    interruptions.clear()
    assert interruptions.pending() is None
    interruptions.raise_pending()
