"""The plugin entry point: `python <this folder> <engine address>` serves the gpu-platform component package.

The Python language host runs a plugin folder that holds `__main__.py` as `python <folder> <args>` (pulumi
v3.259.0 sdk/python/cmd/pulumi-language-python/main.go:1550-1625), and `pulumi package add` of a Git
repository clones the whole repository (https://www.pulumi.com/docs/iac/cli/commands/pulumi_package_add/),
so the repository root, one folder up, holds `components/` and `policies/` the components import.
The interpreter must be Python >= 3.11 (provider/floor.py); an older one gets one line on stderr and exit 1.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from provider.floor import require  # readable by old interpreters: nothing newer than Python 3.7

require()  # one line, before any import a too-old Python cannot read

from pulumi.provider import main  # noqa: E402 - after the floor check, on purpose

from provider.host import GpuPlatformProvider  # noqa: E402

if __name__ == "__main__":
    main(GpuPlatformProvider(), sys.argv[1:])
