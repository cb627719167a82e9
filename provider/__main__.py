"""The plugin entry point: `python <this folder> <engine address>` serves the gpu-platform component package.

The Python language host runs a plugin folder that holds `__main__.py` as `python <folder> <args>` (pulumi
v3.259.0 sdk/python/cmd/pulumi-language-python/main.go:1550-1625), and `pulumi package add` of a Git
repository clones the whole repository (https://www.pulumi.com/docs/iac/cli/commands/pulumi_package_add/),
so the repository root, one folder up, holds `components/` and `policies/` the components import.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pulumi.provider import main

from provider.host import GpuPlatformProvider

if __name__ == "__main__":
    main(GpuPlatformProvider(), sys.argv[1:])
