# checkers: mypy pyright
"""What a checker without the plugin sees (the docs' table): keys are Any and unchecked,
torch.stack/torch.cat reject tensor classes, tensorclass.stack/cat work."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from typing_extensions import assert_type

import tensorclass
from tensorclass import TensorClass


class Frame(TensorClass):
    pixels: torch.Tensor
    done: bool = False


frame = Frame(torch.zeros(2, 3), batch_size=[2])

# -- keys: Any, never flagged -----------------------------------------------------------------
assert_type(frame["pixels"], Any)
assert_type(frame["pixels", "deeper"], Any)
assert_type(frame.get("done"), Any)
frame["no such key"]
frame.select("no such key")
frame.update({"no such key": 1})
not_checked: str = frame["pixels"]  # Any: no error without the plugin

# -- batch indices are typed all the same ------------------------------------------------------
assert_type(frame[0], Frame)
assert_type(frame[torch.tensor([True, False])], Frame)
assert_type(frame[0, ...], Frame)
checked: str = frame[0]  # E: assignment reportAssignmentType

# -- torch.stack / torch.cat accept tensors only; tensorclass.stack / cat keep the class --------
torch.stack([frame, frame])  # E: list-item reportArgumentType
torch.cat((frame, frame))  # E: arg-type reportArgumentType
assert_type(tensorclass.stack([frame, frame]), Frame)
assert_type(tensorclass.cat((frame, frame), 0), Frame)
assert_type(tensorclass.stack([frame, frame], out=frame), Frame)
tensorclass.stack([frame, torch.zeros(2)])  # E: type-var reportArgumentType
tensorclass.cat([frame], dim="0")  # E: arg-type reportArgumentType

# -- other torch functions: tensors only (the plugin types them); the methods keep the class --
torch.maximum(frame, torch.zeros(2))  # E: arg-type reportArgumentType
F.relu(frame)  # E: arg-type reportArgumentType
torch.unbind(frame)  # E: arg-type reportArgumentType
assert_type(frame.maximum(torch.zeros(2)), Frame)
assert_type(frame.apply(F.relu), Frame)
assert_type(frame.unbind(0), tuple[Frame, ...])
