"""Foreign designs: stacks written elsewhere, in documented working (and broken) setups, judged by the whole pack.

Each `*.yaml` here is one design, modelled on a documented setup (its `sources:`), written as the resources
the engine hands the pack (`type`, `name`, `props` as the program's inputs), with none of our components and,
unless the design says so, none of our label contract. `tests/policies/test_foreign_designs.py` runs every
policy of the pack over it in each engine phase and asserts the exact set of mandatory violations.

File format:

    design: <one line>
    sources: [<URL>, ...]          # the documented setup it is modelled on
    resources: [...]               # as in tests/policies/fixtures (harness.py)
    mandatory:                     # every mandatory violation, in every phase: [{policy: NAME, text: SUBSTRING}]
    mandatory_preview:             # optional: the first preview's, when it differs (stack policies wait there)

A broken variant names the design it breaks and one change, instead of `resources:`:

    base: <file>.yaml              # the working design
    patch: [...]                   # harness.apply_patch operations
"""
