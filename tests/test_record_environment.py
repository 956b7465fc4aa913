"""The record's environment names the numeric path of the machine that measured it
(xcbench.store.records.environment / numeric_path)."""
import llvmlite.binding as llvm
import threadpoolctl

from xcbench.store import records


def test_environment_names_the_blas_kernels_and_the_llvm_cpu():
    env = records.environment(1)
    blas = [i for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert env["llvm_cpu"] == llvm.get_host_cpu_name()
    if blas:  # numpy's BLAS as threadpoolctl sees it, with the kernels it chose
        assert env["blas"].startswith(blas[0]["internal_api"])
        assert f"({blas[0].get('architecture')})" in env["blas"]
    assert env["threads"] == 1 and env["cpu"]


def test_an_unreadable_numeric_path_never_fails_a_record(monkeypatch):
    def broken():
        raise RuntimeError("no libraries to inspect")

    monkeypatch.setattr(threadpoolctl, "threadpool_info", broken)
    monkeypatch.setattr(llvm, "get_host_cpu_name", broken)
    assert records.numeric_path() == {"blas": None, "llvm_cpu": None}
    assert records.environment(2)["blas"] is None
