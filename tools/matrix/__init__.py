"""`python -m tools.matrix`: the matrix command (`cli`), its refresh against upstream (`refresh`) and the
derivation of NVIDIA's published data (`nvidia_upstream`)."""
