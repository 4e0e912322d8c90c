#!/usr/bin/env python3
"""Runs one cleave-serve scenario for the lit tests of test/Serve.

  serve.py SERVE_BIN SCENARIO [ARGS...]

The server runs in the foreground of this script (its socket in a fresh
directory under /tmp, whose path is short enough for a Unix socket), with
the environment variables given as --env NAME=VALUE before SCENARIO; the
clients get CLEAVE_SERVER. Every process has a timeout, and whatever this
script started is killed (by its pid) when it ends. It prints, for
FileCheck, each client's output prefixed with "client N:", and at the end
the server's messages prefixed with "server:", pids replaced by PID.

Scenarios:
  parallel CMD [CMD...]     the clients at once (each CMD one string)
  isolation OWNER INTRUDER  OWNER prints "ptr 0x..."; INTRUDER runs with
                            that pointer appended; then OWNER gets a line
                            on stdin and checks its data
  crash VICTIM OTHER        VICTIM prints "ready" and keeps working; OTHER
                            starts, VICTIM is killed (SIGKILL); the server
                            must free what VICTIM held while OTHER goes on
  daemon                    --daemon, --status, --stop
  nobody CMD                CMD as the user nobody (setpriv; this script
                            runs as root), the socket open to every user

Server arguments go before SCENARIO as --arg ARG.

After the server's messages, "gate:" lines sum up its co-scheduler's
(CLEAVE_LOG=plan): how many launches of each kernel it ran, and whether
their launch numbers are one sequence (one gate for every client).
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TIMEOUT = 60
started = []


def spawn(cmd, env, **kw):
    p = subprocess.Popen(cmd, env=env, text=True, **kw)
    started.append(p)
    return p


def alive(pid):
    """Whether \p pid runs (a zombie waiting for its reaper does not)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def status(serve, sock):
    r = subprocess.run([serve, "--status", "--socket", sock], text=True,
                       capture_output=True, timeout=TIMEOUT)
    return r.returncode, r.stdout + r.stderr


def wait_for(pred, what):
    end = time.time() + TIMEOUT
    while time.time() < end:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


def show(prefix, text):
    for line in text.splitlines():
        print(prefix, line)


def normalize(text, pids):
    for p in pids:
        text = re.sub(r"\bpid %d\b" % p, "pid PID", text)
    return re.sub(r"\bpid \d+", "pid PID", text)


def summarize_gate(log):
    done = re.findall(r"cleave co-schedule: (\w+)\(.*?\) \(launch (\d+), "
                      r"priority -?\d+\) done", log)
    if not done:
        return
    kernels = {}
    for name, _ in done:
        kernels[name] = kernels.get(name, 0) + 1
    for name in sorted(kernels):
        print("gate: %d launch(es) of %s" % (kernels[name], name))
    ids = sorted(int(i) for _, i in done)
    print("gate: launch numbers 1..%d, each once: %s" %
          (len(ids), ids == list(range(1, len(ids) + 1))))


def run_parallel(cmds, env):
    procs = [spawn(shlex.split(c), env, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT) for c in cmds]
    for i, p in enumerate(procs):
        out, _ = p.communicate(timeout=TIMEOUT)
        show("client %d:" % i, out)
        print("client %d: exit %d" % (i, p.returncode))


def run_isolation(owner, intruder, env):
    o = spawn(shlex.split(owner), env, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    first = o.stdout.readline()
    show("client 0:", first)
    m = re.search(r"ptr (0x[0-9a-f]+)", first)
    if not m:
        raise RuntimeError("the owner printed no pointer: " + first)
    i = spawn(shlex.split(intruder) + [m.group(1)], env,
              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out, _ = i.communicate(timeout=TIMEOUT)
    show("client 1:", out)
    print("client 1: exit %d" % i.returncode)
    out, _ = o.communicate("go\n", timeout=TIMEOUT)
    show("client 0:", out)
    print("client 0: exit %d" % o.returncode)


def run_crash(victim, other, env, serve, sock, log):
    v = spawn(shlex.split(victim), env, stdout=subprocess.PIPE,
              stderr=subprocess.STDOUT)
    first = v.stdout.readline()
    show("client 0:", first)
    o = spawn(shlex.split(other), env, stdout=subprocess.PIPE,
              stderr=subprocess.STDOUT)
    # The victim holds its buffers on the server and has work in flight;
    # the other client is connected too (it runs for longer than this).
    wait_for(lambda: "2 client(s)" in status(serve, sock)[1] or
             o.poll() is not None, "the second client")
    _, text = status(serve, sock)
    show("status before:", normalize(text, []))
    os.kill(v.pid, signal.SIGKILL)
    v.wait(timeout=TIMEOUT)
    print("client 0: killed")
    out, _ = o.communicate(timeout=TIMEOUT)
    show("client 1:", out)
    print("client 1: exit %d" % o.returncode)
    gone = "(pid %d) gone" % v.pid
    wait_for(lambda: gone in open(log).read(), "the victim's release")
    for line in open(log).read().splitlines():
        if gone in line:
            print("victim:", normalize(line, [v.pid]))
    _, text = status(serve, sock)
    show("status after:", normalize(text, []))


def run_daemon(serve, sock, env, log):
    r = subprocess.run([serve, "--socket", sock, "--daemon", "--log", log],
                       env=env, text=True, capture_output=True,
                       timeout=TIMEOUT)
    print("daemon: exit %d %s" % (r.returncode, r.stderr.strip()))
    rc, text = status(serve, sock)
    m = re.search(r"cleave-serve pid (\d+)", text)
    pid = int(m.group(1)) if m else None
    try:
        show("status:", normalize(text, []))
        r = subprocess.run([serve, "--stop", "--socket", sock], text=True,
                           capture_output=True, timeout=TIMEOUT)
        print("stop: exit %d" % r.returncode)
        pid_gone = pid is not None and not alive(pid)
        print("server process gone:", pid_gone)
        print("socket file gone:", not os.path.exists(sock))
        pid = None if pid_gone else pid
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGKILL)


def main(argv):
    serve = argv[1]
    args = argv[2:]
    env = dict(os.environ)
    server_env = dict(env)
    server_args = []
    while args and args[0] in ("--env", "--arg"):
        if args[0] == "--arg":
            server_args.append(args[1])
        else:
            k, v = args[1].split("=", 1)
            server_env[k] = v
        args = args[2:]
    scenario, rest = args[0], args[1:]
    # Directly under /tmp (not $TMPDIR, which lit makes private): short
    # enough for a socket path, and reachable by the user nobody.
    tmp = tempfile.mkdtemp(prefix="cleave-serve-", dir="/tmp")
    sock = os.path.join(tmp, "s")
    log = os.path.join(tmp, "log")
    server = None
    try:
        if scenario == "daemon":
            run_daemon(serve, sock, server_env, log)
            return 0
        with open(log, "w") as f:
            server = spawn([serve, "--socket", sock] + server_args,
                           server_env, stdout=f, stderr=subprocess.STDOUT)
        wait_for(lambda: status(serve, sock)[0] == 0 or
                 server.poll() is not None, "the server to listen")
        env["CLEAVE_SERVER"] = sock
        if scenario == "parallel":
            run_parallel(rest, env)
        elif scenario == "isolation":
            run_isolation(rest[0], rest[1], env)
        elif scenario == "nobody":
            os.chmod(tmp, 0o755)
            os.chmod(sock, 0o777)
            run_parallel(["setpriv --reuid=65534 --regid=65534 "
                          "--clear-groups " + rest[0]], env)
        elif scenario == "crash":
            run_crash(rest[0], rest[1], env, serve, sock, log)
        else:
            raise RuntimeError("unknown scenario " + scenario)
        r = subprocess.run([serve, "--stop", "--socket", sock],
                           capture_output=True, timeout=TIMEOUT)
        server.wait(timeout=TIMEOUT)
        print("server: exit %d" % server.returncode)
        show("server:", normalize(open(log).read(), []))
        summarize_gate(open(log).read())
        return 0
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
