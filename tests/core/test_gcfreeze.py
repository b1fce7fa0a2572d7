"""netfab.core.gcfreeze: a block of work unfreezes the heap after it, unless a verb froze it for good, without
asking gc.get_freeze_count() (which walks the permanent generation)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from netfab.core import gcfreeze


@pytest.fixture
def thawed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A heap nobody froze (an earlier in-process verb may have frozen this test process's for good)."""
    monkeypatch.setattr(gcfreeze, "_for_good", False)
    monkeypatch.setattr(gcfreeze, "_blocks", 0)
    was = gc.get_freeze_count()
    gc.unfreeze()
    yield
    if was:
        gc.freeze()


def test_a_block_unfreezes_after_the_outermost_block(thawed: None) -> None:
    kept = [[i] for i in range(100)]
    with gcfreeze.block():
        assert gc.get_freeze_count() >= len(kept)
        with gcfreeze.block():
            pass
        assert gc.get_freeze_count() >= len(kept)  # the inner block's end leaves the outer one's freeze
    assert gc.get_freeze_count() == 0


def test_a_block_unfreezes_when_its_work_fails(thawed: None) -> None:
    with pytest.raises(RuntimeError), gcfreeze.block():
        raise RuntimeError("the build failed")
    assert gc.get_freeze_count() == 0 and gcfreeze._blocks == 0


def test_frozen_for_good_stays_frozen(thawed: None) -> None:
    kept = [[i] for i in range(100)]
    gcfreeze.for_good()
    with gcfreeze.block():
        pass
    assert gc.get_freeze_count() >= len(kept)
