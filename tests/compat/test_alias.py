"""``install_as_tensordict()``: tensorclass served as ``tensordict``, in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

from .helpers import ROOT, check_output, environment, needs_tensordict, run_python


def test_the_modules_resolve_to_tensorclass_objects() -> None:
    out = check_output(
        """
        import json, sys
        import tensordict, tensordict.nn, tensordict.utils, tensordict.base
        import tensorclass.nn, tensorclass.utils
        from tensordict import tensorclass as decorator
        from tensordict.tensorclass import NonTensorData
        from tensordict.nn import TensorDictModule
        from tensordict.nn.distributions import NormalParamExtractor
        from tensordict.utils import expand_as_right
        import tensordict.memmap
        print(json.dumps({
            "version": tensordict.__version__,
            "implementation": tensordict.__implementation__,
            "same_td": tensordict.TensorDict is tensorclass.TensorDict,
            "decorator": decorator is tensorclass.tensorclass,
            "memmap_function": tensordict.memmap is tensorclass.memmap,
            "non_tensor": NonTensorData is tensorclass.NonTensorData,
            "module": TensorDictModule is tensorclass.nn.TensorDictModule,
            "extractor": NormalParamExtractor is tensorclass.nn.NormalParamExtractor,
            "utils": expand_as_right is tensorclass.utils.expand_as_right,
            "nn_alias": tensordict.nn is sys.modules["tensordict.nn"],
            "nn_name": tensordict.nn.__name__,
        }))
        """
    )
    found = json.loads(out)
    assert found["version"] == "0.15.3"
    assert found["implementation"].startswith("tensorclass ")
    del found["version"], found["implementation"]
    assert found.pop("nn_name") == "tensordict.nn"
    assert all(found.values()), found


def test_a_module_without_counterpart_is_not_found() -> None:
    out = check_output(
        """
        import importlib.util
        print(importlib.util.find_spec("tensordict.nn") is not None)
        print(importlib.util.find_spec("tensordict.store") is None)
        try:
            import tensordict._C
        except ModuleNotFoundError as err:
            print(err.name)
        """
    )
    assert out.split() == ["True", "True", "tensordict._C"]


def test_installing_twice_is_harmless() -> None:
    out = check_output(
        """
        import sys
        from tensorclass.compat.alias import _FINDER, is_installed
        tensorclass.install_as_tensordict()
        import tensordict
        tensorclass.install_as_tensordict()
        print(is_installed(), sys.meta_path.count(_FINDER))
        """
    )
    assert out.split() == ["True", "1"]


def test_it_is_opt_in() -> None:
    out = check_output(
        """
        import tensorclass, torch
        from tensorclass.compat.alias import is_installed
        td = tensorclass.TensorDict(a=torch.zeros(2), batch_size=[2])
        print(is_installed(), hasattr(td, "_fast_apply"))
        """,
        alias=False,
    )
    assert out.split() == ["False", "False"]


@needs_tensordict
def test_after_the_real_tensordict_it_refuses() -> None:
    done = run_python(
        "import tensordict\nimport tensorclass\ntensorclass.install_as_tensordict()\n",
        alias=False,
    )
    assert done.returncode == 1
    assert "the real tensordict is imported already" in done.stderr


def test_spawned_processes_get_the_alias() -> None:
    out = check_output(
        """
        import multiprocessing
        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                print(pool.apply(eval, ("__import__('tensordict').__implementation__",)))
        """
    )
    assert out.startswith("tensorclass ")


def test_run_as_tensordict_runs_an_unmodified_script(tmp_path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\n"
        "import tensordict, torch\n"
        "td = tensordict.TensorDict(a=torch.zeros(3), batch_size=[3])\n"
        "print(tensordict.__implementation__.split()[0], sys.argv[1:], td.batch_size[0])\n"
        "raise SystemExit(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "tensorclass", "run-as-tensordict", str(script), "--lr", "1"],
        capture_output=True,
        text=True,
        env=environment(),
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.split("\n")[0] == "tensorclass ['--lr', '1'] 3"
