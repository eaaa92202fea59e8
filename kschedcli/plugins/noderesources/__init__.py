"""NodeResourcesFit and NodeResourcesBalancedAllocation."""
