"""The CI roles' IAM policies, derived from the program: `python -m tools.ci_roles` writes docs/iam/.

- `calls`: which AWS API calls each data source, each provider and each resource type needs (with sources);
- `derive`: what the program uses (the data sources its code calls, the resource types it registers);
- `documents`: the preview role's and the deploy role's policy documents, rendered into docs/iam/.
"""
