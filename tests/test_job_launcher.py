"""The worker's job launcher (`leaderboard.worker.job_launcher`): one process per worker run that imports the job
code once and forks each job's process. Tried as an adversary would: a job reads its own first environment block
(/proc/self/environ) for the worker's secrets and scans all of its memory for an earlier job's data; a second job
finds what the launcher imported for the first; a changed environment gets a new launcher; a launcher that goes
kills its jobs."""

from __future__ import annotations

import functools
import os
import re
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from leaderboard.store.records import JobRecord, ResultMeta
from leaderboard.worker.job_contract import JobOutput
from leaderboard.worker.job_launcher import FORKS, JobLauncher, is_secret, without_secrets
from leaderboard.worker.job_process import ProcessRun

pytestmark = pytest.mark.skipif(not FORKS, reason="the launcher forks on Linux only; elsewhere jobs are spawned")

SECRET = "hf_worker_token_only_the_worker_holds"
JUDGE_KEY = "sk-judge-key-the-judge-kind-keeps"
MEMORY_REGION_LIMIT = 1 << 30  # skip reserved, never-touched address ranges larger than this (they read as zeros)


def job(payload: dict, job_id: int = 1) -> JobRecord:
    now = datetime.now(UTC)
    return JobRecord(job_id, 1, "model", payload, "running", 1, 3, "w", None, None, now, now, None)


def memory_holds(pid: int, needle: bytes) -> bool:
    """Whether any readable mapping of process `pid`'s memory holds `needle`: read from outside (this process is
    its ancestor), so the needle this process holds is not what is found."""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if "r" not in perms or end - start > MEMORY_REGION_LIMIT:
                continue
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except OSError:  # [vvar], [vsyscall]: not readable this way
                continue
    return False


def probe(record: JobRecord) -> JobOutput:
    """What a job process can learn: its parent, its environment (as Python and the kernel hold it), and whether the
    modules its kind declared were imported before it ran."""
    started_with = {m: m in sys.modules for m in record.payload.get("check_imported", [])}
    environ_block = Path("/proc/self/environ").read_bytes()
    found = {
        "pid": os.getpid(),
        "parent": os.getppid(),
        "imported_before": started_with,
        "secret_in_environ_block": SECRET.encode() in environ_block,
        "secret_in_os_environ": any(SECRET in v for v in os.environ.values()),
        "judge_key": os.environ.get("FRESHSTACK_JUDGE_API_KEY"),
        "marker_env": os.environ.get("LAUNCHER_TEST_VARIABLE"),
    }
    if record.payload.get("sleep"):
        time.sleep(record.payload["sleep"])
    return JobOutput({}, ResultMeta("rev", parameters=found))


def run(runner: ProcessRun, timeout: float = 120) -> dict:
    try:
        answer = runner.wait(timeout)
        assert answer is not None and answer[0] == "ok", answer
        return answer[1].meta.parameters
    finally:
        runner.close()


@pytest.fixture
def worker_env(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setenv("FRESHSTACK_JUDGE_API_KEY", JUDGE_KEY)
    monkeypatch.setenv("LAUNCHER_TEST_VARIABLE", "first")


def test_the_secret_looking_names():
    assert is_secret("HF_TOKEN") and is_secret("OPENAI_API_KEY") and is_secret("FRESHSTACK_STORE")
    assert not is_secret("TOKENIZERS_PARALLELISM") and not is_secret("HF_HOME")
    env = {"HF_TOKEN": "x", "HOME": "/h", "A_KEY": "k"}
    assert without_secrets(env, kept=("A_KEY",)) == {"HOME": "/h", "A_KEY": "k"}


def test_a_job_holds_no_secret_even_in_its_first_environment_block(worker_env):
    """A spawned job inherited the worker's whole environment block and deleted secrets from `os.environ` only, so
    /proc/self/environ still showed them; a launched job never had them. A kept variable reaches the job."""
    launcher = JobLauncher()
    try:
        seen = run(ProcessRun(probe, job({}), ("FRESHSTACK_JUDGE_API_KEY",), launcher=launcher))
        assert seen["parent"] != os.getpid()  # forked by the launcher, not by this process
        assert not seen["secret_in_environ_block"] and not seen["secret_in_os_environ"]
        assert seen["judge_key"] == JUDGE_KEY and seen["marker_env"] == "first"
        seen = run(ProcessRun(probe, job({}), (), launcher=launcher))
        assert seen["judge_key"] is None  # a kind that keeps nothing gets nothing
    finally:
        launcher.close()
    launcher_environ = Path(f"/proc/{seen['parent']}/environ")
    assert not launcher_environ.exists()  # closed with the run


def test_jobs_of_one_run_share_the_launcher_and_what_it_imported(worker_env):
    """The modules a job kind declares are imported by the launcher before the job is forked: a job of a kind that
    declares none does not find them, the job that declared them does, and so does every later job, each forked by
    the same launcher."""
    module = "tabnanny"  # imported by nothing in the project
    assert module not in sys.modules
    launcher = JobLauncher()
    try:
        seen = [
            run(ProcessRun(probe, job({"check_imported": [module]}), imports=imports, launcher=launcher))
            for imports in ((), (module,), ())
        ]
    finally:
        launcher.close()
    assert [s["imported_before"][module] for s in seen] == [False, True, True]
    assert len({s["parent"] for s in seen}) == 1 and len({s["pid"] for s in seen}) == 3


def test_the_launcher_never_holds_a_job_s_payload(worker_env):
    """What a later job inherits is the launcher's memory, and the launcher never reads a job's message (it goes
    from the worker to the job's own pipe): a job's payload is in the job's memory, never in the launcher's. The
    controls: the same search finds the payload in the job, and the module the job asked for in the launcher."""
    marker = ("embargoed-question-text-" + os.urandom(8).hex()).encode()
    module = "xml.sax.saxutils"
    launcher = JobLauncher()
    runner = ProcessRun(probe, job({"marker": marker.decode(), "sleep": 60}), imports=[module], launcher=launcher)
    try:
        deadline = time.monotonic() + 60
        while runner.pid is None:  # forked once the launcher has imported what the job needs
            assert time.monotonic() < deadline, "the launcher never forked the job"
            time.sleep(0.1)
        child = runner.pid
        while not memory_holds(child, marker):  # the job reads its message as it starts
            assert time.monotonic() < deadline, "the job never read its payload"
            time.sleep(0.2)
        launcher_pid = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert launcher_pid != os.getpid()
        assert memory_holds(launcher_pid, module.encode())
        assert not memory_holds(launcher_pid, marker)
    finally:
        runner.kill()
        runner.close()
        launcher.close()


def test_a_changed_environment_gets_a_new_launcher(worker_env, monkeypatch):
    """A module imported in the launcher may have read a variable at import: when the worker's environment
    changed, the next job comes from a launcher started with the new one."""
    launcher = JobLauncher()
    try:
        first = run(ProcessRun(probe, job({}), launcher=launcher))
        monkeypatch.setenv("LAUNCHER_TEST_VARIABLE", "second")
        second = run(ProcessRun(probe, job({}), launcher=launcher))
        third = run(ProcessRun(probe, job({}), launcher=launcher))
    finally:
        launcher.close()
    assert (first["marker_env"], second["marker_env"]) == ("first", "second")
    assert first["parent"] != second["parent"] == third["parent"]


def test_closing_the_launcher_ends_a_running_job_and_a_killed_job_reads_as_one():
    launcher = JobLauncher()
    runner = ProcessRun(probe, job({"sleep": 60}), launcher=launcher)
    try:
        assert runner.wait(1) is None  # still running
        launcher.close()
        answer = runner.wait(20)
        assert answer is not None and answer[0] == "crash"
        assert re.search(r"killed by signal 9", answer[1]), answer
    finally:
        runner.close()
        launcher.close()


def test_what_each_job_kind_has_the_launcher_import():
    """A kind declares the heavy libraries its handler imports; the launcher imports them only for the registry's
    own evaluate function (a caller's evaluate runs no handler) and only when the job's payload needs a model."""
    from leaderboard.worker.job_contract import LOADS_MODELS
    from leaderboard.worker.jobs import JOB_KINDS, evaluate_job
    from leaderboard.worker.worker import _imports

    assert JOB_KINDS["model"].imports_for({}) == LOADS_MODELS and JOB_KINDS["reranker"].imports_for({}) == LOADS_MODELS
    assert JOB_KINDS["baseline"].imports_for({"method": "bm25"}) == ()
    assert JOB_KINDS["baseline"].imports_for({"method": "dense"}) == LOADS_MODELS
    assert JOB_KINDS["baseline"].imports_for({"method": "hybrid"}) == LOADS_MODELS
    assert JOB_KINDS["baseline"].imports_for({"method": "no such method"}) == ()
    assert JOB_KINDS["answers_baseline"].imports_for({}) == LOADS_MODELS  # from the hybrid by default
    assert JOB_KINDS["fill"].imports_for({}) == () and JOB_KINDS["rescore"].imports_for({}) == ()
    assert _imports(job({}), functools.partial(evaluate_job, dataset="d")) == LOADS_MODELS
    assert _imports(job({}), probe) == ()


def ended(pid: int) -> bool:
    """Whether process `pid` has ended and can be reaped: a zombie whose other threads are gone too (until then its
    parent's wait does not report it), or no process at all."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state in ("Z", "X") and len(os.listdir(f"/proc/{pid}/task")) <= 1
    except FileNotFoundError:
        return True


def test_a_launcher_killed_between_jobs_is_replaced(worker_env):
    launcher = JobLauncher()
    try:
        first = run(ProcessRun(probe, job({}), launcher=launcher))
        os.kill(first["parent"], signal.SIGKILL)
        deadline = time.monotonic() + 20
        while not ended(first["parent"]):
            assert time.monotonic() < deadline, "the launcher outlived SIGKILL"
            time.sleep(0.05)
        second = run(ProcessRun(probe, job({}), launcher=launcher))
    finally:
        launcher.close()
    assert second["parent"] != first["parent"]
