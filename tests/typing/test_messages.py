"""The plugin's messages name the bad key and list the valid ones; value errors name the
key, the declared type and the value's type."""

from __future__ import annotations

import pytest

from .checkers import CASES, Diagnostic


def _messages(found: list[Diagnostic], case: str, line_text: str) -> list[str]:
    path = (CASES / case).resolve()
    lines = path.read_text().splitlines()
    numbers = [n for n, text in enumerate(lines, 1) if text.strip().startswith(line_text)]
    assert len(numbers) == 1, f"{line_text!r} should be on exactly one line of {case}"
    return [d.message for d in found if d.path == path and d.line == numbers[0]]


@pytest.mark.parametrize(
    ("case", "line_text", "message"),
    [
        (
            "keys.py",
            'ep["rewards"]',
            '"rewards" is not a field of Episode; valid keys: "obs", "reward", "done"',
        ),
        (
            "keys.py",
            'ep["obs", "stp"]',
            '"stp" is not a field of Observation (in ("obs", "stp")); '
            'valid keys: "pixels", "step", "note", "extras"',
        ),
        (
            "keys.py",
            'ep["reward", "x"]',
            'Key ("reward", "x") does not exist: Episode.reward holds "Tensor", '
            'not a tensor class, so it has no key "x"',
        ),
        (
            "nn_keys.py",
            'TensorDictModule(policy, in_keys=["stat"]',
            'in_keys of schema Obs: "stat" is not a field of Obs; valid keys: "pixels", '
            '"state", "hidden", "action", "value", "info", "loc", "scale"',
        ),
        (
            "nn_keys.py",
            '("pixels", "rgba"),',
            'in_keys of schema Obs: "rgba" is not a field of Pixels (in ("pixels", "rgba")); '
            'valid keys: "rgb"',
        ),
        (
            "keys_methods.py",
            'o.select("y", "nope")',
            '"nope" is not a field of Outer; valid keys: "inner", "y", "meta", "free"',
        ),
        (
            "keys_methods.py",
            'o.update({"inner": {"xx": t}})',
            '"xx" is not a field of Inner (in ("inner", "xx")); valid keys: "x"',
        ),
        (
            "keys_methods.py",
            'o.rename_key_("y", "nope")',
            '"nope" is not a field of Outer; valid keys: "inner", "y", "meta", "free"',
        ),
        (
            "nn_keys.py",
            'TensorDictModule(policy, [("camera", "rbg")]',
            'in_keys of schema Robot: "rbg" is not a field of Camera (in ("camera", "rbg")); '
            'valid keys: "rgb"',
        ),
        (
            "nn_keys.py",
            'selected_out_keys=["values"]',
            'selected_out_keys of schema Obs: "values" is not a field of Obs; valid keys: '
            '"pixels", "state", "hidden", "action", "value", "info", "loc", "scale"',
        ),
    ],
)
def test_key_error_message(
    plugin_results: list[Diagnostic], case: str, line_text: str, message: str
) -> None:
    assert message in _messages(plugin_results, case, line_text)


@pytest.mark.parametrize(
    ("line_text", "message"),
    [
        (
            'b.setdefault("reward", "high")',
            'Value of type "str" cannot be written to key "reward" of Step: '
            'the field is declared "Tensor | None"',
        ),
        (
            "b.update(dict(stats=dict(note=2)))",
            'Value of type "int" cannot be written to key "stats, note" of Step: '
            'the field is declared "str"',
        ),
        (
            "b.update(dict(rewards=t))",
            '"rewards" is not a field of Step; valid keys: "obs", "reward", "stats", "label", '
            '"extra"',
        ),
        (
            'b.set_at_("obs", "x", 0)',
            'Value of type "str" cannot be written to key "obs" of Step at an index: '
            'the field is declared "Tensor"',
        ),
        (
            'b.set_non_tensor("obs", t)',
            'Value of type "Tensor" cannot be written to key "obs" of Step by set_non_tensor: '
            'the field is declared "Tensor", which holds no non-tensor data',
        ),
    ],
)
def test_value_error_message(
    plugin_results: list[Diagnostic], line_text: str, message: str
) -> None:
    """A value error names the key, the field's declared type and the value's type."""
    assert _messages(plugin_results, "key_writes.py", line_text) == [message]


def test_unknown_key_error_code_can_be_ignored(plugin_results: list[Diagnostic]) -> None:
    """``# type: ignore[tensorclass-key]`` silences it (strict mypy flags unused ignores)."""
    assert _messages(plugin_results, "keys.py", 'ep["ignored"]') == []
