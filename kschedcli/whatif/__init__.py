"""What-if questions over a loaded cluster: cluster edits, capacity, drain, diff, scenarios, carrying
preemption out, and verified fixes."""
