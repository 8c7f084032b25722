"""``python -m mantra_env.mantra_cli``: the ``mantra`` command without the installed console script."""

import sys

from mantra_env.mantra_cli.main import main

sys.exit(main())
