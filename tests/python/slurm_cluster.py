"""A real one-node Slurm cluster for tests: munged, slurmctld and slurmd started as root on this
machine from Debian's packages (slurmctld, slurmd, slurm-client, munge; scripts/test.sh installs
them), with everything they write in one temporary folder:

  ROOT/munge/   the cluster's own munge key, munged's log and seed (mode 700)
  ROOT/run/     munged's socket and the three pid files (mode 755: munged wants its socket's
                folder searchable by everyone)
  ROOT/state/, ROOT/spool/, ROOT/log/, ROOT/slurm.conf

The controller and the node daemon listen on free ports picked at start, so the cluster never
meets the machine's own Slurm (if any) nor another test's. Every client command is run with
SLURM_CONF pointing at ROOT/slurm.conf. stop() ends the daemons by the ids in their pid files
(checking each id still names that daemon), SIGTERM first, SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: The commands the cluster needs, with the Debian package of each.
REQUIRED = {"munged": "munge", "slurmctld": "slurmctld", "slurmd": "slurmd",
            "sbatch": "slurm-client", "squeue": "slurm-client", "scontrol": "slurm-client",
            "sinfo": "slurm-client", "scancel": "slurm-client"}
#: The daemons in the order they are stopped, with the pid file each writes.
DAEMONS = (("slurmd", "slurmd.pid"), ("slurmctld", "slurmctld.pid"), ("munged", "munged.pid"))
#: Daemons' binaries live in sbin, which a non-login PATH may lack.
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


class SlurmSetupError(RuntimeError):
    """The cluster cannot be set up here (packages missing, not root, a daemon did not start);
    the message says what to do."""


def missing_commands() -> list[str]:
    """The Debian packages whose commands are not installed."""
    return sorted({pkg for cmd, pkg in REQUIRED.items()
                   if shutil.which(cmd, path=SEARCH_PATH) is None})


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    """One controller and one node (this machine, `hostname -s`), in a temporary folder."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="gpubench-slurm-"))
        self.root.chmod(0o755)
        self.node = socket.gethostname().split(".", 1)[0]
        self.conf = self.root / "slurm.conf"
        self.run_dir = self.root / "run"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf), PATH=SEARCH_PATH)

    # ------------------------------------------------------------------ start

    def start(self, timeout: float = 30.0) -> None:
        """Starts munged, slurmctld and slurmd and waits until the node is idle."""
        missing = missing_commands()
        if missing:
            raise SlurmSetupError(f"Slurm is not installed: apt-get install {' '.join(missing)} "
                                  f"(scripts/test.sh installs slurmctld slurmd slurm-client munge)")
        if os.geteuid() != 0:
            raise SlurmSetupError("the Slurm test starts munged, slurmctld and slurmd as root; "
                                  "run it as root (as scripts/test.sh does)")
        self._start_munge()
        self._write_conf()
        self._daemon(["slurmctld", "-i", "-f", str(self.conf)], "slurmctld.pid")
        self._daemon(["slurmd", "-f", str(self.conf)], "slurmd.pid")
        self._wait_idle(timeout)

    def _start_munge(self) -> None:
        key_dir = self.root / "munge"
        key_dir.mkdir(mode=0o700)
        self.run_dir.mkdir(mode=0o755)
        key = key_dir / "munge.key"
        key.write_bytes(os.urandom(1024))  # this cluster's own credentials key
        key.chmod(0o600)
        self._daemon(["munged", f"--socket={self.run_dir / 'munge.sock'}", f"--key-file={key}",
                      f"--pid-file={self.run_dir / 'munged.pid'}",
                      f"--log-file={key_dir / 'munged.log'}",
                      f"--seed-file={key_dir / 'munged.seed'}"], "munged.pid")

    def _write_conf(self) -> None:
        for d in ("state", "spool", "log"):
            (self.root / d).mkdir(mode=0o755)
        r = self.root
        self.conf.write_text("\n".join([
            "ClusterName=gpubenchtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.run_dir / 'munge.sock'}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={self.run_dir / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.run_dir / 'slurmd.pid'}",
            f"SlurmctldLogFile={r / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'log' / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "MpiDefault=none",
            "ReturnToService=2",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN",
            f"PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))

    def _daemon(self, argv: list[str], pid_file: str, timeout: float = 15.0) -> None:
        """Runs a daemon (it forks into the background) and waits for its pid file."""
        proc = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise SlurmSetupError(f"{argv[0]} did not start (exit {proc.returncode}): "
                                  f"{proc.stderr.strip()[-500:]}\n{self.logs()}")
        deadline = time.monotonic() + timeout
        while self._pid(pid_file) is None:
            if time.monotonic() > deadline:
                raise SlurmSetupError(f"{argv[0]} wrote no pid file in {timeout:g} s\n"
                                      f"{self.logs()}")
            time.sleep(0.05)

    def _wait_idle(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            state = self.client("sinfo", "-h", "-N", "-o", "%T").stdout.strip()
            if state == "idle":
                return
            time.sleep(0.2)
        raise SlurmSetupError(f"the node did not become idle in {timeout:g} s (sinfo: "
                              f"'{state}')\n{self.logs()}")

    # ------------------------------------------------------------------ use

    def client(self, *argv: str, env: dict | None = None,
               timeout: float = 30.0) -> subprocess.CompletedProcess:
        """A Slurm client command against this cluster (SLURM_CONF set; `env` added)."""
        return subprocess.run(list(argv), env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)

    def submit(self, script: Path, *sbatch_args: str, env: dict | None = None) -> str:
        """Submits a batch script; returns the job id."""
        proc = self.client("sbatch", "--parsable", *sbatch_args, str(script), env=env)
        if proc.returncode != 0:
            raise AssertionError(f"sbatch failed (exit {proc.returncode}): {proc.stderr}\n"
                                 f"{self.logs()}")
        return proc.stdout.strip().split(";")[0]

    def wait(self, job_id: str, timeout: float = 60.0) -> dict[str, tuple[str, str]]:
        """Polls until no task of the job is pending or running; returns each task's
        (JobState, ExitCode) by its id ("12_0", ...). AssertionError (with the logs) on
        timeout, after cancelling the job."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            queued = self.client("squeue", "-h", "-j", job_id, "-o", "%i %T")
            gone = "Invalid job id" in queued.stderr  # finished long enough ago to be purged
            if gone or (queued.returncode == 0 and not queued.stdout.strip()):
                return self.job_states(job_id)
            time.sleep(0.25)
        self.client("scancel", job_id)
        raise AssertionError(f"job {job_id} did not finish in {timeout:g} s: "
                             f"{self.job_states(job_id)}\n{self.logs()}")

    def job_states(self, job_id: str) -> dict[str, tuple[str, str]]:
        """(JobState, ExitCode) of each task of a job the controller still knows."""
        out = self.client("scontrol", "-o", "show", "job", job_id).stdout
        states = {}
        for line in out.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            task = fields.get("ArrayTaskId")
            name = f"{fields.get('ArrayJobId', job_id)}_{task}" if task else fields.get("JobId", "")
            states[name] = (fields.get("JobState", "?"), fields.get("ExitCode", "?"))
        return states

    def logs(self, lines: int = 15) -> str:
        """The last lines of every daemon log, for failure messages."""
        out = []
        for log in sorted(self.root.glob("*/*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {log.name}\n" + "\n".join(tail))
        return "\n".join(out)

    # ------------------------------------------------------------------ stop

    def _pid(self, pid_file: str) -> int | None:
        try:
            return int((self.run_dir / pid_file).read_text().strip())
        except (OSError, ValueError):
            return None

    @staticmethod
    def _alive(pid: int, name: str) -> bool:
        """The process exists, is not a zombie, and is the daemon `name` (not a reused id)."""
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        comm, state = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:][:1]
        return comm == name[:15] and state != "Z"

    def stop(self, grace: float = 10.0) -> list[str]:
        """Cancels what is left of the jobs, then stops each daemon by its pid file; returns the
        daemons that needed SIGKILL."""
        killed = []
        if self.conf.exists() and self._pid("slurmctld.pid") is not None:
            try:
                self.client("scancel", "--user=root", timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for name, pid_file in DAEMONS:
            pid = self._pid(pid_file)
            if pid is None or not self._alive(pid, name):
                continue
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while self._alive(pid, name) and time.monotonic() < deadline:
                time.sleep(0.05)
            if self._alive(pid, name):
                os.kill(pid, signal.SIGKILL)
                killed.append(name)
        return killed

    def remove(self) -> None:
        """Deletes the temporary folder (after stop())."""
        shutil.rmtree(self.root, ignore_errors=True)
