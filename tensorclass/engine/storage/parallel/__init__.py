"""Work over processes: :mod:`.map` (``map`` over a pool of workers), :mod:`.methods`
(``share_memory_``, ``map``...)."""
