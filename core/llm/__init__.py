"""Model providers, the router and its lanes."""
