"""The record's environment names the numeric path of the machine that measured it
(xcbench.store.records.environment / numeric_path)."""
import re

import llvmlite.binding as llvm
import threadpoolctl
from numba.core import config

from xcbench.store import records


def test_environment_names_the_blas_kernels_and_the_cpu_numba_compiles_for():
    env = records.environment(1)
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    name, digest = env["llvm_cpu"].split()
    assert name == (config.CPU_NAME or llvm.get_host_cpu_name())
    assert re.fullmatch("[0-9a-f]{8}", digest)  # the CPU features' digest
    for info in blas:  # every BLAS threadpoolctl sees, with the kernels it chose
        assert info["internal_api"] in env["blas"]
        if info.get("architecture"):
            assert f"({info['architecture']})" in env["blas"]
    assert "None" not in (env["blas"] or "")
    assert env["threads"] == 1 and env["cpu"]


def test_numbas_own_cpu_override_is_what_is_recorded(monkeypatch):
    monkeypatch.setattr(config, "CPU_NAME", "generic")
    monkeypatch.setattr(config, "CPU_FEATURES", "+sse2")
    other = records.numeric_path()["llvm_cpu"]
    monkeypatch.setattr(config, "CPU_FEATURES", "+sse2,+avx2")
    assert other.startswith("generic ") and records.numeric_path()["llvm_cpu"] != other


def test_an_unreadable_numeric_path_never_fails_a_record(monkeypatch):
    def broken():
        raise RuntimeError("no libraries to inspect")

    monkeypatch.setattr(threadpoolctl, "threadpool_info", broken)
    monkeypatch.setattr(config, "CPU_NAME", None)
    monkeypatch.setattr(llvm, "get_host_cpu_name", broken)
    assert records.numeric_path() == {"blas": None, "llvm_cpu": None}
    assert records.environment(2)["blas"] is None


class _Features:
    def __init__(self, text):
        self.text = text

    def flatten(self):
        return self.text


def test_the_digest_follows_the_host_cpu_features(monkeypatch):
    """Two hosts of one CPU name with other features get other digests; the same features,
    the same digest."""
    monkeypatch.setattr(config, "CPU_FEATURES", None)
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: _Features("+sse2,+avx2"))
    first = records.numeric_path()["llvm_cpu"].split()[1]
    assert records.numeric_path()["llvm_cpu"].split()[1] == first
    monkeypatch.setattr(llvm, "get_host_cpu_features", lambda: _Features("+sse2,-avx2"))
    assert records.numeric_path()["llvm_cpu"].split()[1] != first
