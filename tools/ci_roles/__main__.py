import sys

from tools.ci_roles.documents import main

sys.exit(main())
