"""Runs a program found on PATH with PATH set to an empty folder, so that the
programs it looks up in turn (Graphviz `dot`) are not found."""
import os
import shutil
import subprocess
import sys
import tempfile

program = shutil.which(sys.argv[1])
with tempfile.TemporaryDirectory() as empty:
    sys.exit(subprocess.call([program] + sys.argv[2:],
                             env=dict(os.environ, PATH=empty)))
