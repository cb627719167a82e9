"""`python -m tools.preview`: the offline preview command (`command`), its data (`model`) and its summary (`render`)."""
