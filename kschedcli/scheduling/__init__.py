"""The scheduling cycle: schedule_one, batching, HTTP extender calls, and the analysis made after a
cycle for the views."""
