"""Keys: reading and writing by key, listing keys, and the key structure.

:mod:`.access` (``get``, ``set``, ``update``, ``pop``, ``select``, ``exclude``...),
:mod:`.listing` (``keys``/``items``/``values`` walks), :mod:`.structure` (``clear``,
``rename_keys``, ``flatten_keys``...), :mod:`.dim_names`, :mod:`.merging` (``group_by``) and
:mod:`.predicates` (``is_leaf`` filters). Builds on :mod:`..core` only.
"""
