"""What the Kubernetes API server and Helm would say of what a Pulumi program renders, checked offline.

`check.check_resources` is the entry point (`tools.preview` runs it in every phase, before the policy gate):
built-in objects against the Kubernetes OpenAPI schemas (`schemas`), custom resources against the
upstream CRDs' structural schemas and their CEL rules (`cel_rules`), Helm releases' values against the
upstream chart's values.yaml (`helm_values`).
"""
