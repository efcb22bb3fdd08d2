"""python3 -m sandbox: the sandbox's command line (cli.py)."""

import sys

from .cli import main

sys.exit(main())
