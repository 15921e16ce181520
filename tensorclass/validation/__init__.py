"""Runtime validation of tensor classes: tensor specs and annotations, checked with pydantic.

- :func:`validate` checks data (any tensor class instance, a ``TensorDict`` or a nested
  mapping) against a tensor class and returns an instance of it; ``X.validate(data)`` is
  the same call.
- :func:`check_instance` checks a constructed instance in place; classes declared with
  ``validate=True`` call it from their constructor.

Both raise one ``pydantic.ValidationError`` that lists every problem with its location.
"""

from .compiled import ClassValidator, compiled
from .run import check_instance, validate

__all__ = ["ClassValidator", "check_instance", "compiled", "validate"]
