"""The core of the engine: the state every instance holds and the boundary checks.

:mod:`.state` holds ``TensorCore`` (a dict of leaves, a batch size, a device, dim names, the
lock), the fast internal constructor ``_new``, the write rule and the schema policy read
from the class; :mod:`.inline` writes that rule (and the key walks) into each path that
uses it; :mod:`.paths` follows a key path through nested instances; :mod:`.lazy_stacks`
reaches lazy stacks from below them; :mod:`.self_types` and :mod:`.attach` type and attach
the operations; :mod:`.safe_globals` lists what ``torch.load`` may rebuild. It imports
nothing else of the engine: every concept folder builds on it.
"""
