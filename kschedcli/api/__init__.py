"""API objects as the scheduler reads them (typed views with the API server's defaulting), label and
node selectors, quantities, and the API server's validation of what a person writes."""
