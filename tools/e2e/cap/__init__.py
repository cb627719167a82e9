"""Before anything is created: what the run needs (preflight), and the cost cap and quota check (cost)."""
