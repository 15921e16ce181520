"""The core of the engine: the state every instance holds and the boundary checks.

:mod:`.state` holds ``TensorCore`` (a dict of leaves, a batch size, a device, dim names, the
lock), the fast internal constructor ``_new`` and the schema policy read from the class;
:mod:`.paths` follows a key path through nested instances; :mod:`.inplace` writes in place
through lazy stacks; :mod:`.masks` checks a batch mask before a leaf is touched;
:mod:`.repr` prints an instance; :mod:`.safe_globals` lists what ``torch.load`` may rebuild.
It imports nothing else of the engine: every concept folder builds on it.
"""
