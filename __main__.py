"""gpu-platform: GPU inference on Amazon EKS. Stack config in, components out (see components/)."""

import pulumi

from components.config import load_stack_config
from components.program import build, export

export(build(load_stack_config(pulumi.Config())))
