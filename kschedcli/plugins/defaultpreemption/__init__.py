"""The DefaultPreemption plugin: the dry run, victims, and Go's sort order."""
