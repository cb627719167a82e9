"""The sweeper: the deletion order as data (order), how each kind is found and deleted (kinds), retries (retry),
and the sweep itself with its tagging-API check (sweeper)."""
