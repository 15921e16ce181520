"""Keys: a key is a ``str`` or a (nested) tuple of ``str``.

Nested tuples are flattened, so ``("a", ("b", ("c",)))`` is the key ``("a", "b", "c")``
and ``("a",)`` is the key ``"a"``.
"""

from __future__ import annotations

from typing import TypeAlias, Union

from .errors import InvalidKeyError

__all__ = [
    "KEY_SEPARATOR",
    "NestedKey",
    "key_str",
    "shown_key",
    "unravel_key",
    "unravel_key_list",
    "unravel_key_to_tuple",
    "unravel_key_tuple",
    "unravel_keys",
]

NestedKey: TypeAlias = Union[str, tuple["NestedKey", ...]]  # noqa: UP007
"""A string, or a tuple of nested keys: ``"obs"``, ``("obs", "pixels")``."""


def _flatten_into(key: object, out: list[str], whole: object) -> None:
    for part in key:  # type: ignore[attr-defined]
        if type(part) is str:
            out.append(part)
        elif type(part) is tuple:
            _flatten_into(part, out, whole)
        else:
            raise InvalidKeyError(
                f"keys must be str or tuples of str; got {type(part).__name__} {part!r}"
                f" in key {whole!r}"
            )


def unravel_key_tuple(key: object) -> tuple[str, ...]:
    """Return ``key`` as a flat, non-empty tuple of strings.

    >>> unravel_key_tuple(("a", ("b", ("c",))))
    ('a', 'b', 'c')
    """
    if type(key) is str:
        return (key,)
    if type(key) is not tuple:
        raise InvalidKeyError(
            f"keys must be str or tuples of str; got {type(key).__name__} {key!r}"
        )
    out: list[str] = []
    _flatten_into(key, out, key)
    if not out:
        raise InvalidKeyError("keys must not be empty; got ()")
    return tuple(out)


def unravel_key(key: object) -> str | tuple[str, ...]:
    """Normalise a key: a string stays a string, nested tuples are flattened.

    >>> unravel_key(("a", ("b",)))
    ('a', 'b')
    >>> unravel_key(("a",))
    'a'
    """
    if type(key) is str:
        return key
    flat = unravel_key_tuple(key)
    return flat[0] if len(flat) == 1 else flat


def unravel_keys(*keys: object) -> tuple[str | tuple[str, ...], ...]:
    """Normalise several keys at once (see :func:`unravel_key`)."""
    return tuple(unravel_key(key) for key in keys)


def key_str(key: str | tuple[str, ...]) -> str:
    """A key as it appears in messages: ``'a'`` or ``('a', 'b')``."""
    return repr(key)


def shown_key(path: tuple[str, ...]) -> str | tuple[str, ...]:
    """A key path as messages show it: ``'a'`` for one part, else the tuple."""
    return path[0] if len(path) == 1 else path


KEY_SEPARATOR = "."
"""The separator ``flatten_keys`` and ``unflatten_keys`` use by default: ``"."``."""


def unravel_key_list(keys: list[object] | tuple[object, ...]) -> list[str | tuple[str, ...]]:
    """Normalise every key of a list (see :func:`unravel_key`).

    >>> unravel_key_list(["a", ("b", ("c",)), ("d",)])
    ['a', ('b', 'c'), 'd']
    """
    if not isinstance(keys, (list, tuple)):
        raise TypeError(
            f"unravel_key_list takes a list or tuple of keys; got {type(keys).__name__}"
        )
    return [unravel_key(key) for key in keys]


def unravel_key_to_tuple(key: object) -> tuple[str, ...]:
    """A key as a flat tuple of strings (a string gives a 1-tuple); ``()`` if it is not
    a valid key.

    >>> unravel_key_to_tuple(("a", ("b",))), unravel_key_to_tuple("a"), unravel_key_to_tuple(1)
    (('a', 'b'), ('a',), ())
    """
    try:
        return unravel_key_tuple(key)
    except InvalidKeyError:
        return ()
