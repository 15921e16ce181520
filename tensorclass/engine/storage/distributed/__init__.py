"""Tensor classes over ``torch.distributed``: :mod:`.point_to_point` (``send``/``recv``...),
:mod:`.rooted` (collectives with a root rank), :mod:`.wire_tree` (a whole tree as JSON plus
one buffer) and :mod:`.methods` (the methods every class gets)."""
