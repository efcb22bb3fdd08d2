"""python3 -m tools.sandbox: the sandbox's command line (cli.py)."""

import sys

from .cli import main

sys.exit(main())
