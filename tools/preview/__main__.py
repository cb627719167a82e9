"""`python -m tools.preview`: see `tools.preview.command`."""

import sys

if "--watch" in sys.argv[1:]:
    from tools.preview.watch import main as watch_main

    sys.exit(watch_main(sys.argv[1:]))

from tools.preview.command import main

sys.exit(main())
