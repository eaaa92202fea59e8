"""The scheduling framework: statuses, cycle state, plugin interfaces and the runtime."""
