"""Dynamic Resource Allocation: the objects, the CEL environment, the claim tracker and the
structured allocator the DynamicResources plugin uses."""
