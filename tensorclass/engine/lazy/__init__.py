"""Lazy stacks: ``LazyStackedTensorDict`` keeps its members and stacks a key when it is read.

:mod:`.stack` is the class; :mod:`.leaves` its storage (a mapping stacked on read),
:mod:`.members` the member list, :mod:`.shape` the batch-dim operations that keep the
members, :mod:`.maths` element-wise maths member by member, :mod:`.ragged` reads of keys whose
members differ in shape, :mod:`.cat` the torch functions it answers itself, :mod:`.pytree`
``torch.func`` over lazy stacks, :mod:`.forward` the names read from the members' class and
:mod:`.collate` ``DataLoader`` batching (dense or lazy stacks). The top of the engine: builds on everything below.
"""
