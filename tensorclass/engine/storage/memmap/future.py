""":class:`TensorDictFuture`: what a save started with ``return_early=True`` returns.

Here, below ``base.py``, so that the saving functions can return it; ``tensorclass.utils``
re-exports it under tensordict's module path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

__all__ = ["TensorDictFuture"]

T = TypeVar("T")


class TensorDictFuture(Generic[T]):
    """A result still being written by background threads: :meth:`result` waits for every
    one of ``futures`` (raising the first error among them) and returns ``resulting_td``.

    Args:
        futures: the writes to wait for (``concurrent.futures.Future`` s).
        resulting_td: what the writes fill, returned once they are done.

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from tensorclass import TensorDict
    >>> from tensorclass.utils import TensorDictFuture
    >>> with ThreadPoolExecutor(1) as pool:
    ...     future = TensorDictFuture([pool.submit(lambda: None)], TensorDict())
    ...     future.result().batch_size
    torch.Size([])
    """

    def __init__(self, futures: Sequence[Future[Any]], resulting_td: T) -> None:
        self.futures = list(futures)
        self._outcome: Callable[[], T] = lambda: resulting_td

    @classmethod
    def of(cls, future: Future[T]) -> TensorDictFuture[T]:
        """The future of what ``future`` computes (a save run whole in one thread).

        >>> from concurrent.futures import ThreadPoolExecutor
        >>> from tensorclass.utils import TensorDictFuture
        >>> with ThreadPoolExecutor(1) as pool:
        ...     TensorDictFuture.of(pool.submit(lambda: 3)).result()
        3
        """
        made: TensorDictFuture[T] = cls.__new__(cls)
        made.futures = [future]
        made._outcome = future.result
        return made

    @property
    def resulting_td(self) -> T:
        """What :meth:`result` returns; it waits for the writes."""
        return self.result()

    def result(self, timeout: float | None = None) -> T:
        """The result, once every write is done (the first write's error is raised);
        ``timeout`` (seconds, for each write) as ``concurrent.futures.Future.result``."""
        for future in self.futures:
            future.result(timeout)
        return self._outcome()

    def done(self) -> bool:
        """Whether every write is done."""
        return all(future.done() for future in self.futures)
