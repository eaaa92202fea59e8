"""Where a cluster comes from: snapshot files, the live cluster through kubectl, the cache of parsed
snapshots, lookups by name, and how the command line names them."""
