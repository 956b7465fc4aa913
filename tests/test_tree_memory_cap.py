"""The extreme-scale memory rule for every built-in tree method: at K = 1e4 classes and
D = 1e5 sparse features, weights with a dense row of D per class or per node child would
take >= 8 GB and a (nodes x K) int32 array >= 0.4 GB, so each method must fit and predict
in a subprocess whose address space is capped at 1 GB above what it holds after loading
its compiled code."""
import os
import subprocess
import sys
import textwrap

import pytest

import xcbench

# cheap settings per method, so each capped fit takes seconds; the cap, not accuracy, is
# what is tested
SETTINGS = {
    "lomtree": {"passes": 2},
    "recall_tree": {"passes": 2},
    "hsm": {"epochs": 2, "lr": 0.1},
    "st": {"init": "cluster", "depth": 8, "n_iter": 1},
    "ast": {"init": "cluster", "depth0": 7, "k0": 100, "initial_iter": 1, "max_stages": 1,
            "global_iter": 1, "expand_iter": 1},
    "label_tree": {"epochs": 1},
    "label_tree:liblinear": {"solver": "liblinear", "bits": "csr", "loss": "independent",
                             "branching": 64},
    "label_embedding_tree": {"epochs": 1},
    "mary_tree": {"epochs": 1},
}
# query-time decoders each method must also run under the cap
DECODERS = {"hsm": ("greedy", "topk", "exact"), "mary_tree": ("greedy", "exact")}

_CAPPED_FIT = textwrap.dedent("""
    import resource, sys
    sys.path[:0] = {path!r}
    import xcbench
    from tests.test_online_scaling import _sparse_problem
    K, D = 10_000, 100_000
    X, y = _sparse_problem(1500, K, D)
    params = {params!r}
    # a small fit first, so compiled code and libraries are loaded before the cap
    xcbench.make_method({name!r}, random_state=0, **params).fit(X[:60], y[:60] % 3,
                                                                 n_classes=3)
    vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
    m = xcbench.make_method({name!r}, random_state=0, **params).fit(X, y, n_classes=K)
    for decoder in {decoders!r}:
        m.set_params(decoder=decoder)
        labels, _ = m.predict_topk(X[:5], 3)
        assert labels.shape == (5, 3) and (labels[:, 0] >= 0).all(), labels
    print("fitted", m.predict(X[:5]).shape[0])
""")


def _tree_methods():
    """The tree methods xcbench ships (peers wrap other programs and are left out)."""
    return sorted(name for name, spec in xcbench.contract.plugins.method_specs().items()
                  if spec.family == "tree" and spec.plugin != "peers"
                  and spec.factory.__module__.startswith("xcbench_"))


def test_every_built_in_tree_method_is_capped():
    missing = set(_tree_methods()) - {key.split(":")[0] for key in SETTINGS}
    assert not missing, f"add {sorted(missing)} to SETTINGS"


@pytest.mark.parametrize("key", sorted(SETTINGS))
def test_fits_k_1e4_d_1e5_under_a_one_gigabyte_cap(key):
    name = key.split(":")[0]
    code = _CAPPED_FIT.format(path=sys.path, name=name, params=SETTINGS[key],
                              decoders=DECODERS.get(name, ()))
    single_threaded = {f"{lib}_NUM_THREADS": "1" for lib in ("OMP", "OPENBLAS", "MKL", "NUMBA")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, **single_threaded})
    assert run.returncode == 0 and "fitted 5" in run.stdout, run.stderr[-2000:]
