"""Starts a build, sends it a signal once its temporary directory exists,
and prints what is left in $TMPDIR: `interrupt-build.py SIG TMPDIR cmd...`."""
import os, signal, subprocess, sys, time

sig, tmp, cmd = getattr(signal, sys.argv[1]), sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, env=dict(os.environ, TMPDIR=tmp))
deadline = time.time() + 120
while time.time() < deadline and p.poll() is None:
    if any(n.startswith("cleave-") and os.path.isdir(os.path.join(tmp, n))
           for n in os.listdir(tmp)):
        break
    time.sleep(0.05)
p.send_signal(sig)
rc = p.wait()
print("exit", "signal " + signal.Signals(-rc).name if rc < 0 else rc)
print("left:", sorted(os.listdir(tmp)))
