"""Running tensordict programs (TorchRL) on tensorclass: the ``tensordict`` alias
(:func:`install_as_tensordict`) and the private tensordict names such programs use."""

from .alias import install_as_tensordict, is_installed

__all__ = ["install_as_tensordict", "is_installed"]
