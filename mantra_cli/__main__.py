"""``python -m mantra_cli``: the ``mantra`` command without the installed console script."""

import sys

from mantra_cli.main import main

sys.exit(main())
