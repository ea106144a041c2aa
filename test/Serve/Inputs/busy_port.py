#!/usr/bin/env python3
"""Run COMMAND with `{port}` replaced by a port this script is listening on.

    busy_port.py COMMAND...

Its exit status and output are the command's: how a server reports a port already in use.
"""
import socket
import subprocess
import sys

with socket.socket() as held:
    held.bind(("127.0.0.1", 0))
    held.listen()
    port = str(held.getsockname()[1])
    command = [part.replace("{port}", port) for part in sys.argv[1:]]
    raise SystemExit(subprocess.run(command).returncode)
