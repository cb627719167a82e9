"""`python -m tools.matrix`: see `tools.matrix.cli`."""

import sys

from tools.matrix.cli import main

sys.exit(main())
