"""STAND-IN stdio server: answers the first message with a 12 MiB line (over the 8 MiB cap),
then floods stdout and ignores SIGTERM, so the client must kill it with its pipe paused."""

import signal
import sys

signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.readline()
sys.stdout.write("c" * (12 * 1024 * 1024) + "\n")
sys.stdout.flush()
while True:
    sys.stdout.write("d" * (1024 * 1024))
    sys.stdout.flush()
