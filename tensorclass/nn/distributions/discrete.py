"""One-hot categorical draws: :class:`OneHotCategorical` and :func:`rand_one_hot`.

>>> import torch
>>> from tensorclass.nn import OneHotCategorical
>>> dist = OneHotCategorical(logits=torch.tensor([0.0, 2.0, 1.0]))
>>> dist.mode
tensor([0., 1., 0.])
>>> dist.log_prob(torch.tensor([0.0, 1.0, 0.0]))
tensor(-0.4076)
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch import distributions as D

_Shape = torch.Size | list[int] | tuple[int, ...]
_EMPTY = torch.Size()

__all__ = ["OneHotCategorical", "rand_one_hot"]


def rand_one_hot(values: Tensor, do_softmax: bool = True) -> Tensor:
    """A one-hot draw along the last dim of ``values`` (``torch.long``, shape of ``values``).

    Args:
        values: logits (or probabilities with ``do_softmax=False``) on the last dim.
        do_softmax: apply a softmax to ``values`` first.

    >>> import torch
    >>> from tensorclass.nn import rand_one_hot
    >>> rand_one_hot(torch.tensor([[0.0, 1.0], [1.0, 0.0]]), do_softmax=False)
    tensor([[0, 1],
            [1, 0]])
    """
    probs = values.softmax(-1) if do_softmax else values
    flat = probs.reshape(-1, probs.shape[-1])
    index = torch.multinomial(flat, 1).reshape(*probs.shape[:-1], 1)
    return torch.zeros(probs.shape, dtype=torch.long, device=probs.device).scatter_(-1, index, 1)


class OneHotCategorical(D.OneHotCategorical):
    """``torch.distributions.OneHotCategorical`` with a gradient through its samples.

    Everything is torch's (one-hot values on the last dim, ``mean``, ``log_prob``,
    ``entropy``...), plus:

    - :meth:`rsample`: a straight-through sample, one-hot in value with the gradient of a
      ``RelaxedOneHotCategorical`` sample (``grad_method="relaxed_one_hot"``, at
      ``temperature``), or of the probabilities (``grad_method="pass_through"``);
    - :attr:`mode` (the first most likely category) and :attr:`deterministic_sample`.

    Args:
        logits: the unnormalised log-probabilities, as for torch (give this or ``probs``).
        probs: the probabilities, as for torch (give this or ``logits``).
        grad_method: ``"relaxed_one_hot"`` (default) or ``"pass_through"``.
        temperature: the relaxation's temperature (default ``1.0``).
        **kwargs: passed to torch (``validate_args``).
    """

    has_rsample = True

    def __init__(
        self,
        logits: Tensor | None = None,
        probs: Tensor | None = None,
        *,
        grad_method: str = "relaxed_one_hot",
        temperature: float = 1.0,
        **kwargs: Any,
    ) -> None:
        if grad_method not in ("relaxed_one_hot", "pass_through"):
            raise ValueError(
                f"OneHotCategorical: grad_method must be 'relaxed_one_hot' or "
                f"'pass_through'; got {grad_method!r}"
            )
        self.grad_method = grad_method
        self.temperature = temperature
        super().__init__(probs=probs, logits=logits, **kwargs)

    @property
    def mode(self) -> Tensor:
        """The one-hot encoding of the most likely category (the first on ties)."""
        probs = self._categorical.probs
        index = probs.argmax(-1, keepdim=True)
        return torch.zeros_like(probs).scatter_(-1, index, 1.0)

    @property
    def deterministic_sample(self) -> Tensor:
        """The mode (what ``InteractionType.DETERMINISTIC`` draws)."""
        return self.mode

    def rsample(self, sample_shape: _Shape = _EMPTY) -> Tensor:
        """A one-hot sample whose gradient flows to the parameters (see the class)."""
        shape = torch.Size(sample_shape)
        if self.grad_method == "pass_through":
            hard: Tensor = self.sample(shape)  # type: ignore[no-untyped-call]
            probs = self.probs.expand_as(hard)
            return hard + (probs - probs.detach())
        relaxed = D.RelaxedOneHotCategorical(torch.tensor(self.temperature), logits=self.logits)
        soft = relaxed.rsample(shape)
        hard = torch.zeros_like(soft).scatter_(-1, soft.argmax(-1, keepdim=True), 1.0)
        return hard + (soft - soft.detach())
