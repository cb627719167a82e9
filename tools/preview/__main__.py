"""`python -m tools.preview`: see `tools.preview.command`."""

import sys

from tools.preview.command import main

sys.exit(main())
