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

# setdefault: the default is written when the key is missing; the result is the field's
assert_type(b.setdefault("reward", t), torch.Tensor | None)
assert_type(b.setdefault(("stats", "value"), t), torch.Tensor)  # a missing level is made
b.setdefault("reward", "high")  # E: tensorclass-value
b.setdefault("reward", 1.5)  # E: tensorclass-value

# dict(key=value) is checked as the dict literal is (nested mappings followed both ways)
b.update(dict(reward=t, label="x", stats=dict(value=t, note="n")))
b.update(dict({"obs": t}, label="y"))
b.update(dict(extra=dict(anything=t)))  # below a TensorDict: any value
b.update(dict(reward="high"))  # E: tensorclass-value
b.update(dict(stats=dict(note=2)))  # E: tensorclass-value
b.update({"stats": dict(note=2)})  # E: tensorclass-value
b.update(dict(stats={"note": 2}))  # E: tensorclass-value
b.update(dict({"label": 2}, obs=t))  # E: tensorclass-value
b.update_(dict(obs="x"))  # E: tensorclass-value
b.update(dict(rewards=t))  # E: tensorclass-key
# mappings whose entries are not written out are left alone (no false errors)
labels: dict[str, str] = {"label": "x"}
b.update(labels)
b.update(dict(labels, obs=t))
b.update(dict(**labels))
b.update({k: "x" for k in ("label",)})

# at a batch index the value is a slice of the leaf: a tensor or a number fits a tensor
b.set_at_("obs", t[0], 0)
b.set_at_("obs", 1, 0)
b.set_at_("obs", 0.5, slice(0, 2))
b.set_at_("obs", True, 0)
b.set_at_(("stats", "value"), 1.0, 0)
b.set_at_("label", "x", 0)
b.set_at_("stats", stats[0:2], slice(0, 2))
b.set_at_("stats", {"value": t[0:2]}, slice(0, 2))
b.set_at_("stats", 0.0, 0)  # into every tensor leaf of the nested instance
b.update_at_({"obs": t[0:2], "stats": {"value": 0.0}}, slice(0, 2))
b.update_at_(dict(obs=1, label="x"), 0)
b.copy_at_({"obs": t[0]}, 0)
b.set_at_("obs", "x", 0)  # E: tensorclass-value
b.set_at_("obs", [1.0, 2.0], slice(0, 2))  # E: tensorclass-value
b.set_at_("reward", None, 0)  # None is no slice  # E: tensorclass-value
b.set_at_("label", 3, 0)  # E: tensorclass-value
b.set_at_("stats", "x", 0)  # E: tensorclass-value
b.update_at_({"obs": "x"}, 0)  # E: tensorclass-value
b.update_at_(dict(stats=dict(note=1)), 0)  # E: tensorclass-value
b.copy_at_({"label": 1}, 0)  # E: tensorclass-value
b.set_at_("statss", t, 0)  # E: tensorclass-key
b.copy_at_({"obss": t}, 0)  # E: tensorclass-key

# set_non_tensor stores non-tensor data: the field's type, never a tensor or nested field
b.set_non_tensor("label", "z")
b.set_non_tensor(("stats", "note"), "z")
b.set_non_tensor(("extra", "anything"), 3)
b.set_non_tensor("label", 3)  # E: tensorclass-value
b.set_non_tensor("obs", t)  # E: tensorclass-value
b.set_non_tensor("stats", {"value": t})  # E: tensorclass-value
b.set_non_tensor("labels", "z")  # E: tensorclass-key

# through an optional nested field, a key may be missing: the read may give None
assert_type(b["stats", "value"], torch.Tensor | None)
assert_type(b.get(("stats", "note")), str | None)
assert_type(b.get(("stats", "value"), t), torch.Tensor)
assert_type(b["stats"], Stats | None)
assert_type(b["reward"], torch.Tensor | None)
assert_type(b["obs"], torch.Tensor)
if b.stats is not None:
    assert_type(b.stats["value"], torch.Tensor)  # narrowed: present
