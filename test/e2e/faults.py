#!/usr/bin/env python3
"""Faults during `collc run`: a rank stopped (over shm and over socket),
every rank stopped, a rank killed (while running and during setup), the
launcher killed, collc killed, collc interrupted (also while it compiles),
and a temporary directory that is full, missing or noexec. Each case checks
the exit status, the message (which must name the right rank), the time
bound, and that no process, temporary file or /dev/shm entry is left behind.

usage: faults.py COLLC EXAMPLES_DIR
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

COLLC, EXAMPLES = sys.argv[1], sys.argv[2]
TIMEOUT = 3  # COLL_TIMEOUT for the ranks: every wait of theirs ends within it
GRACE = 6    # what the launcher may add to it (its grace period, polling, exits)
failures = []


def check(case, condition, what):
    if not condition:
        failures.append(f"{case}: {what}")
        print(f"  FAIL {what}")


def processes_under(tmp):
    """Pids whose command line names a file in `tmp` (the launcher and ranks)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if any(tmp.encode() in a for a in cmd):
            found.append((int(pid), [a.decode(errors="replace") for a in cmd if a]))
    return found


def rank_pid(tmp, rank):
    for pid, cmd in processes_under(tmp):
        if "--child" in cmd and cmd[cmd.index("--child") + 1] == str(rank):
            return pid
    return None


def launcher_pid(tmp):
    for pid, cmd in processes_under(tmp):
        if cmd[0].endswith("collc-launch") and "--child" not in cmd:
            return pid
    return None


def wait_for(probe, seconds, step=0.002):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = probe()
        if value:
            return value
        time.sleep(step)
    return None


def start(tmp, extra_env=None, example="binary_tree_reduce.coll", count=100000, transport="shm"):
    env = dict(os.environ, TMPDIR=tmp, COLL_TIMEOUT=str(TIMEOUT))
    env.update(extra_env or {})
    args = [COLLC, "run", os.path.join(EXAMPLES, example), "--ranks", "4",
            "--count", str(count), "--iters", "1000000", "--transport", transport]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def finish(case, proc, tmp, shm_before, since, bound, status, message, clean_tmp=True):
    try:
        out, _ = proc.communicate(timeout=bound + 30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        check(case, False, "collc run did not end")
    took = time.monotonic() - since
    print(f"  exit {proc.returncode} after {took:.1f} s: {out.strip().splitlines()[-1:]}")
    if status is not None:
        check(case, proc.returncode == status, f"exit status {proc.returncode}, expected {status}")
    check(case, took <= bound, f"took {took:.1f} s, more than {bound} s")
    if message:
        check(case, message in out, f"no '{message}' in: {out.strip()}")
    for bad in ("Broken pipe", "LLVM ERROR", "Stack dump"):
        check(case, bad not in out, f"'{bad}' in: {out.strip()}")
    left = wait_for(lambda: not processes_under(tmp), 3, 0.05)
    check(case, left, f"processes left: {processes_under(tmp)}")
    if clean_tmp:
        check(case, not os.listdir(tmp), f"files left in TMPDIR: {os.listdir(tmp)}")
    shm_after = set(os.listdir("/dev/shm"))
    check(case, shm_after <= shm_before, f"/dev/shm entries left: {shm_after - shm_before}")


def case_signal_rank(case, sig, rank, status, message, at_once=False):
    """Sends `sig` to `rank` once it runs (at once: as soon as it exists)."""
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        shm = set(os.listdir("/dev/shm"))
        proc = start(tmp)
        pid = wait_for(lambda: rank_pid(tmp, rank), 60, 0.0005 if at_once else 0.01)
        check(case, pid, "the rank never started")
        if not at_once:
            time.sleep(0.5)  # into the collective
        since = time.monotonic()
        if pid:
            os.kill(pid, sig)
        finish(case, proc, tmp, shm, since, GRACE, status, message)


def case_stop_rank(transport):
    """Rank 1 stopped: its peers time out after COLL_TIMEOUT and end on their
    own, waiting for nothing more (over socket, their connections to the
    stopped rank close without a second COLL_TIMEOUT); the launcher then
    names rank 1 within its grace period, as over shm."""
    case = f"stop rank 1 ({transport})"
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        shm = set(os.listdir("/dev/shm"))
        proc = start(tmp, transport=transport)
        pids = [wait_for(lambda r=r: rank_pid(tmp, r), 60, 0.01) for r in range(4)]
        check(case, all(pids), "the ranks never started")
        time.sleep(0.5)  # into the collective
        since = time.monotonic()
        if pids[1]:
            os.kill(pids[1], signal.SIGSTOP)
        # Before the launcher's grace period ends and it kills them.
        peers_end = TIMEOUT + 2.5
        ended = wait_for(lambda: not any(rank_pid(tmp, r) for r in (0, 2, 3)), peers_end, 0.05)
        print(f"  ranks 0, 2, 3 ended after {time.monotonic() - since:.1f} s")
        check(case, ended, f"ranks 0, 2, 3 still run {peers_end} s after rank 1 stopped")
        finish(case, proc, tmp, shm, since, TIMEOUT + 3 + 1.5, 1, "rank 1 is stopped")


def case_stop_every_rank():
    """With every rank stopped none times out or ends: the launcher's own
    deadline must end the launch and name them all."""
    case = "stop every rank"
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        shm = set(os.listdir("/dev/shm"))
        proc = start(tmp)
        pids = [wait_for(lambda r=r: rank_pid(tmp, r), 60, 0.01) for r in range(4)]
        check(case, all(pids), "the ranks never started")
        time.sleep(0.5)
        since = time.monotonic()
        for pid in filter(None, pids):
            os.kill(pid, signal.SIGSTOP)
        finish(case, proc, tmp, shm, since, TIMEOUT + GRACE, 1, "ranks 0, 1, 2, 3 are stopped")


def case_signal_tool(case, which, sig, status, message, clean_tmp=True):
    """Sends `sig` to collc itself, its launcher, or the whole process group."""
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        shm = set(os.listdir("/dev/shm"))
        # Healthy ranks until the signal, however loaded the machine: no
        # wait of theirs may time out first (what ends them is the signal).
        proc = start(tmp, {"COLL_TIMEOUT": "60"})
        check(case, wait_for(lambda: rank_pid(tmp, 3), 60, 0.01), "the ranks never started")
        time.sleep(0.5)
        since = time.monotonic()
        if which == "collc":
            os.kill(proc.pid, sig)
        elif which == "group":  # what Ctrl-C in a terminal does
            os.killpg(proc.pid, sig)
        else:
            os.kill(launcher_pid(tmp), sig)
        finish(case, proc, tmp, shm, since, GRACE, status, message, clean_tmp)
        for f in os.listdir(tmp):  # collc killed by SIGKILL cannot tidy up
            os.unlink(os.path.join(tmp, f))


def case_interrupt_compiler(case, which):
    """Interrupts collc while the host compiler runs: every process the
    compiler started (cc1plus, as) ends too, and leaves no file behind."""
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        shm = set(os.listdir("/dev/shm"))
        proc = start(tmp)
        cc1 = lambda: any("cc1plus" in cmd[0] for _, cmd in processes_under(tmp))
        check(case, wait_for(cc1, 60, 0.001), "the compiler never started")
        since = time.monotonic()
        if which == "collc":
            os.kill(proc.pid, signal.SIGINT)
        else:  # Ctrl-C: the compiler is in a process group of its own
            os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=GRACE + 30)
        # collc returns only once the compiler's processes have ended
        check(case, not cc1(), f"the compiler outlives collc: {processes_under(tmp)}")
        finish(case, proc, tmp, shm, since, GRACE, 130, "collc run: interrupted")


def case_noexec_tmpdir():
    """A TMPDIR mounted noexec, from which no library can be loaded: collc
    run says so before it compiles."""
    case = "noexec TMPDIR"
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        script = (f'mount -t tmpfs -o noexec tmpfs "{tmp}" && '
                  f'TMPDIR="{tmp}" "{COLLC}" run "{EXAMPLES}/ring_allreduce.coll" --ranks 4; '
                  f'status=$?; ls -A "{tmp}"; exit $status')
        r = subprocess.run(["unshare", "-r", "-m", "sh", "-c", script], capture_output=True,
                           text=True, timeout=120)
        out = r.stdout + r.stderr
        print(f"  exit {r.returncode}: {out.strip().splitlines()[-1:]}")
        check(case, r.returncode == 1, f"exit status {r.returncode}, expected 1")
        check(case, f"the temporary directory {tmp} is on a file system mounted noexec" in out,
              f"unclear message: {out.strip()}")
        check(case, "collc-run" not in r.stdout, f"files left: {r.stdout.strip()}")


def case_full_tmpdir(size):
    """A TMPDIR on a tiny tmpfs, in a mount namespace of its own: with 4 KiB
    collc cannot write the kernel source, with 16 KiB the compiler fails."""
    case = f"full TMPDIR ({size})"
    print(case)
    with tempfile.TemporaryDirectory() as tmp:
        script = (f'mount -t tmpfs -o size={size} tmpfs "{tmp}" && '
                  f'TMPDIR="{tmp}" "{COLLC}" run "{EXAMPLES}/ring_allreduce.coll" --ranks 4; '
                  f'status=$?; ls -A "{tmp}"; exit $status')
        r = subprocess.run(["unshare", "-r", "-m", "sh", "-c", script], capture_output=True,
                           text=True, timeout=120)
        out = r.stdout + r.stderr
        print(f"  exit {r.returncode}: {out.strip().splitlines()[-2:]}")
        check(case, r.returncode == 1, f"exit status {r.returncode}, expected 1")
        check(case, "full?" in out, f"does not say the directory may be full: {out.strip()}")
        check(case, "collc-run" not in r.stdout, f"files left: {r.stdout.strip()}")
        for bad in ("LLVM ERROR", "Stack dump"):
            check(case, bad not in out, f"'{bad}' in: {out.strip()}")


def case_missing_tmpdir():
    case = "missing TMPDIR"
    print(case)
    env = dict(os.environ, TMPDIR="/nonexistent/collc-test")
    r = subprocess.run([COLLC, "run", os.path.join(EXAMPLES, "ring_allreduce.coll"),
                        "--ranks", "2"], env=env, capture_output=True, text=True, timeout=120)
    print(f"  exit {r.returncode}: {r.stderr.strip()}")
    check(case, r.returncode == 1, f"exit status {r.returncode}, expected 1")
    check(case, "cannot create a file in the temporary directory /nonexistent/collc-test"
          in r.stderr and "set TMPDIR" in r.stderr, f"unclear message: {r.stderr.strip()}")


case_stop_rank("shm")
case_stop_rank("socket")
case_stop_every_rank()
case_signal_rank("kill rank 1", signal.SIGKILL, 1, 1, "rank 1 killed by signal 9")
case_signal_rank("kill rank 2 during setup", signal.SIGKILL, 2, 1, "rank 2 killed by signal 9",
                 at_once=True)
case_signal_rank("crash rank 3", signal.SIGSEGV, 3, 1, "rank 3 killed by signal 11")
case_signal_tool("kill the launcher", "launcher", signal.SIGKILL, 1, "collc-launch")
case_signal_tool("kill collc", "collc", signal.SIGKILL, -signal.SIGKILL, None, clean_tmp=False)
case_signal_tool("interrupt collc", "collc", signal.SIGINT, 130, "collc run: interrupted")
case_signal_tool("terminate collc", "collc", signal.SIGTERM, 130, "collc run: interrupted")
case_signal_tool("Ctrl-C", "group", signal.SIGINT, 130, "collc run: interrupted")
case_interrupt_compiler("interrupt collc while it compiles", "collc")
case_interrupt_compiler("Ctrl-C while collc compiles", "group")
case_noexec_tmpdir()
case_full_tmpdir("4k")
case_full_tmpdir("16k")
case_missing_tmpdir()

print(f"{len(failures)} checks failed" if failures else "every fault case passed")
for f in failures:
    print("  " + f)
sys.exit(1 if failures else 0)
