"""``xcbench check`` survives any plugin: five fault plugins, registered as a third party's
would be, each reported with the right status while the other checks still run, and no
process left behind (issue 61, item 3)."""
import os
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest
from test_conformance import NearestMean

import xcbench
from xcbench import MethodSpec
from xcbench.cli import EXIT_CELL_FAILED, EXIT_USAGE, main
from xcbench.contract.conformance import CHECK_NAMES
from xcbench.contract.plugins import register_plugin

#: every check but check_stats, the only one that calls stats()
NOT_STATS = len(CHECK_NAMES) - 1


class WritesLabels(NearestMean):
    """log_proba overwrites its y: scored on the labels it chose, it would look perfect."""

    def log_proba(self, X, y):
        out = super().log_proba(X, y)
        y[:] = 0
        return out


class Exits(NearestMean):
    """stats() ends the process: os._exit(0) (a plain exit a CI gate would read as a pass) or
    sys.exit(3)."""

    def __init__(self, scale=1.0, how="os_exit"):
        super().__init__(scale)
        self.how = how

    def stats(self):
        if self.how == "os_exit":
            os._exit(0)
        sys.exit(3)


class Hangs(NearestMean):
    def stats(self):
        time.sleep(3600)


class Allocates(NearestMean):
    """stats() allocates 50 MB blocks without end."""

    def stats(self):
        blocks = []
        while True:
            blocks.append(np.ones(50 * 2 ** 20 // 8))


class Spawns(NearestMean):
    """stats() starts a program that would outlive it, writing its pid to ``pid_file``."""

    def __init__(self, scale=1.0, pid_file=""):
        super().__init__(scale)
        self.pid_file = pid_file

    def stats(self):
        child = subprocess.Popen(["sleep", "300"])
        with open(self.pid_file, "w") as f:
            f.write(str(child.pid))
        return super().stats()


class FaultPlugin:
    """The five fault methods and a healthy one, registered through the plugin hook."""

    @xcbench.hookimpl
    def register_methods(self, register):
        for name, factory in (("fault-mutate", WritesLabels), ("fault-exit", Exits),
                              ("fault-hang", Hangs), ("fault-allocate", Allocates),
                              ("fault-spawn", Spawns), ("healthy", NearestMean)):
            register(MethodSpec(name=name, family="flat", description="test",
                                factory=factory))


@pytest.fixture
def faults(fresh_plugins):
    register_plugin(FaultPlugin(), name="fault-plugin")


def check(capsys, *argv):
    """(exit code, {check name: "pass" | "FAIL"}, {check name: its line}, summary line)."""
    code = main(["check", *argv])
    lines = capsys.readouterr().out.splitlines()
    status = {line.split()[1].rstrip(":"): line.split()[0] for line in lines[:-1]}
    return code, status, {line.split()[1].rstrip(":"): line for line in lines[:-1]}, lines[-1]


def only_failed(status):
    return sorted(name for name, s in status.items() if s == "FAIL")


@pytest.mark.parametrize("how, reason", [
    ("os_exit", "the run's process died (exit code 0)"),
    ("sys_exit", "SystemExit: 3")])
def test_a_plugin_that_exits_fails_its_check_and_the_rest_run(faults, capsys, how, reason):
    """Before: os._exit(0) made check exit 0 with no output, sys.exit(3) exited 3."""
    code, status, lines, summary = check(capsys, "fault-exit", "--param", f"how={how}")
    assert code == EXIT_CELL_FAILED
    assert only_failed(status) == ["check_stats"] and len(status) == len(CHECK_NAMES)
    assert reason in lines["check_stats"] and "error in the check's own process" in \
        lines["check_stats"]
    assert summary.endswith(f"{NOT_STATS} of {len(CHECK_NAMES)} checks run passed; "
                            "FAILED: check_stats")


def test_a_hanging_plugin_times_out(faults, capsys):
    """Before: a sleeping method hung check forever."""
    start = time.perf_counter()
    code, status, lines, _ = check(capsys, "fault-hang", "--timeout", "5")
    assert code == EXIT_CELL_FAILED and only_failed(status) == ["check_stats"]
    assert "timeout in the check's own process: exceeded the timeout of 5 s" in \
        lines["check_stats"]
    assert time.perf_counter() - start < 120


def test_an_allocating_plugin_hits_the_memory_cap(faults, capsys):
    """Before: the allocating method grew check to 21 GB, then the kernel killed it."""
    code, status, lines, _ = check(capsys, "fault-allocate", "--memory-limit", "300M")
    assert code == EXIT_CELL_FAILED and only_failed(status) == ["check_stats"]
    assert "exceeded the memory limit of 0.315 GB" in lines["check_stats"]


def test_a_plugin_writing_into_its_labels_fails_the_inputs_check(faults, capsys):
    code, status, lines, _ = check(capsys, "fault-mutate")
    assert code == EXIT_CELL_FAILED and "check_inputs_unchanged" in only_failed(status)
    assert "log_proba wrote into its argument y (dense X)" in lines["check_inputs_unchanged"]


def gone(pid, wait=10.0):
    """Whether process ``pid`` has ended (a zombie waiting for its reaper counts as ended)."""
    deadline = time.perf_counter() + wait
    while time.perf_counter() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_a_program_the_plugin_starts_does_not_outlive_its_check(faults, capsys, tmp_path):
    pid_file = tmp_path / "pid"
    code, status, _, _ = check(capsys, "fault-spawn", "--param", f"pid_file={pid_file}",
                               "--skip", ",".join(n for n in CHECK_NAMES if n != "check_stats"))
    assert code == 0 and only_failed(status) == [] and status["check_stats"] == "pass"
    pid = int(pid_file.read_text())
    assert gone(pid), f"the plugin's program {pid} still runs after check ended"


def test_the_faults_leave_the_checking_process_and_other_methods_unaffected(faults, capsys):
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    for argv in (["fault-exit"], ["fault-hang", "--timeout", "5"],
                 ["fault-allocate", "--memory-limit", "300M"]):
        assert check(capsys, *argv, "--skip", ",".join(
            n for n in CHECK_NAMES if n != "check_stats"))[0] == EXIT_CELL_FAILED
    code, status, _, summary = check(capsys, "healthy")
    assert code == 0 and not only_failed(status)
    assert summary == f"healthy: {len(CHECK_NAMES)} of {len(CHECK_NAMES)} checks run passed"
    left = {p.pid for p in psutil.Process().children(recursive=True)} - before
    assert not [pid for pid in left if not gone(pid, wait=2.0)]


def test_in_process_checks_still_run_without_isolation(faults, capsys):
    """--in-process (for a debugger) runs the checks here: a written label still fails."""
    code, status, lines, _ = check(capsys, "fault-mutate", "--in-process")
    assert code == EXIT_CELL_FAILED and "check_inputs_unchanged" in only_failed(status)
    assert "log_proba wrote into its argument y (dense X)" in lines["check_inputs_unchanged"]


def test_bad_limits_are_refused(faults, capsys):
    with pytest.raises(SystemExit) as refused:
        main(["check", "healthy", "--timeout", "0"])
    assert refused.value.code == EXIT_USAGE
    assert "argument --timeout: duration '0' must be positive" in capsys.readouterr().err
    assert main(["check", "healthy", "--memory-limit", "lots"]) == EXIT_USAGE
    assert "not understood" in capsys.readouterr().err


def test_the_timeout_may_be_written_as_a_duration(faults, capsys):
    code, status, lines, _ = check(capsys, "fault-hang", "--timeout", "0.05m", "--skip",
                                   ",".join(n for n in CHECK_NAMES if n != "check_stats"))
    assert code == EXIT_CELL_FAILED and "exceeded the timeout of 3 s" in lines["check_stats"]
