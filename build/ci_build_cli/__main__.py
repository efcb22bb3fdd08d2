"""`PYTHONPATH=build python3 -m ci_build_cli ...` from the checkout: the same as build/ci_build."""

import sys

from ci_build_cli.cli import main

sys.exit(main())
