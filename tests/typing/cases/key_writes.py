# checkers: plugin
"""Values written by key are checked against the declared field, as reads are typed by it;
a key through an optional nested field may be missing."""

from __future__ import annotations

from typing import Literal

import torch
from typing_extensions import assert_type

from tensorclass import TensorClass, TensorDict


class Stats(TensorClass):
    value: torch.Tensor
    note: str = ""


class Step(TensorClass):
    obs: torch.Tensor
    reward: torch.Tensor | None = None
    stats: Stats | None = None
    label: str = "step"
    extra: TensorDict | None = None


t = torch.zeros(4)
b = Step(t, batch_size=[4])
stats = Stats(t, batch_size=[4])

# writes of the declared types (and None into an optional field) are fine
b["reward"] = t
b["reward"] = None
b["label"] = "other"
b["stats"] = stats
b["stats"] = {"value": t}  # a mapping is converted to the nested class
b["stats", "value"] = t
b["extra", "anything"] = 3  # below a TensorDict: dynamic keys, any value
b.set("reward", t)
b.set(("stats", "note"), "fine")
b.set_("obs", t)
b.update({"reward": t, "label": "x", "stats": {"value": t, "note": "n"}})
b.update_({"obs": t})
key: Literal["obs"] = "obs"
b[key] = t
name = "reward"
b[name] = "not checked: the key is not literal"

# wrong value types are errors (code tensorclass-value)
b["reward"] = "high"  # E: tensorclass-value
b["label"] = 3  # E: tensorclass-value
b["obs"] = None  # a required field  # E: tensorclass-value
b["stats"] = t  # E: tensorclass-value
b["stats", "value"] = "x"  # E: tensorclass-value
b.set("reward", "high")  # E: tensorclass-value
b.set(("stats", "note"), 1.5)  # E: tensorclass-value
b.set_("obs", [1, 2])  # E: tensorclass-value
b.update({"reward": "high"})  # E: tensorclass-value
b.update({"obs": t, "label": 2})  # E: tensorclass-value
b.update({"stats": {"note": 2}})  # E: tensorclass-value
b.update_({"reward": 1j})  # E: tensorclass-value
b["rewards"] = t  # an unknown key stays a key error  # E: tensorclass-key
b["reward"] = "x"  # type: ignore[tensorclass-value]

# through an optional nested field, a key may be missing: the read may give None
assert_type(b["stats", "value"], torch.Tensor | None)
assert_type(b.get(("stats", "note")), str | None)
assert_type(b.get(("stats", "value"), t), torch.Tensor)
assert_type(b["stats"], Stats | None)
assert_type(b["reward"], torch.Tensor | None)
assert_type(b["obs"], torch.Tensor)
if b.stats is not None:
    assert_type(b.stats["value"], torch.Tensor)  # narrowed: present
