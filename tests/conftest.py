import os
import sys
import tempfile
from pathlib import Path

# the cache of parsed snapshots (kschedcli/inputs/cache.py) of the test run: never the user's
os.environ["KSCHED_CACHE_DIR"] = tempfile.mkdtemp(prefix="ksched-test-cache-")
# and the secret its entries are authenticated with: never the user's key file
os.environ["KSCHED_CACHE_KEY_FILE"] = os.path.join(tempfile.mkdtemp(prefix="ksched-test-key-"), "cache-key")

sys.path.insert(0, str(Path(__file__).parent))
# test modules share helpers across folders (test_extenders uses test_fixes' manifest builders):
# every folder on the path, so that a subset of the suite imports them as the whole suite does
# (test module names are unique across folders: pytest's default import mode requires it)
for _folder in sorted(p for p in Path(__file__).parent.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
    sys.path.append(str(_folder))
