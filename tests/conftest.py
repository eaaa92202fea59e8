import os
import sys
import tempfile
from pathlib import Path

# the cache of parsed snapshots (kschedcli/snapshot_cache.py) of the test run: never the user's
os.environ["KSCHED_CACHE_DIR"] = tempfile.mkdtemp(prefix="ksched-test-cache-")

sys.path.insert(0, str(Path(__file__).parent))
