"""Key normalisation, re-exported for the engine (defined in :mod:`tensorclass.keys`)."""

from ..keys import NestedKey, key_str, shown_key, unravel_key, unravel_key_tuple, unravel_keys

__all__ = ["NestedKey", "key_str", "shown_key", "unravel_key", "unravel_key_tuple", "unravel_keys"]
