"""The public API keeps its signatures: every public name and class member, as recorded."""

from __future__ import annotations

import json

from .signatures import SNAPSHOT, public_signatures


def test_every_public_signature_is_as_recorded() -> None:
    recorded = json.loads(SNAPSHOT.read_text())
    current = public_signatures()
    missing = sorted(set(recorded) - set(current))
    added = sorted(set(current) - set(recorded))
    changed = sorted(k for k in set(recorded) & set(current) if recorded[k] != current[k])
    details = [f"missing: {k}" for k in missing] + [f"new: {k}" for k in added]
    details += [f"changed: {k}: {recorded[k]} -> {current[k]}" for k in changed]
    assert not details, "\n".join(details[:50])


def test_the_snapshot_covers_the_classes_and_their_methods() -> None:
    recorded = json.loads(SNAPSHOT.read_text())
    assert "tensorclass.TensorDict.permute" in recorded
    assert "tensorclass.LazyStackedTensorDict.get" in recorded
    assert "tensorclass.nn.TensorDictModule.forward" in recorded
    assert len(recorded) > 3000
