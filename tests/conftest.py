import os
import sys
import tempfile
from pathlib import Path

# the cache of parsed snapshots (kschedcli/inputs/cache.py) of the test run: never the user's
os.environ["KSCHED_CACHE_DIR"] = tempfile.mkdtemp(prefix="ksched-test-cache-")
# and the secret its entries are authenticated with: never the user's key file
os.environ["KSCHED_CACHE_KEY_FILE"] = os.path.join(tempfile.mkdtemp(prefix="ksched-test-key-"), "cache-key")

sys.path.insert(0, str(Path(__file__).parent))
