"""`python -m jaxamg ...`: the command-line interface."""

import sys

from ._cli import main

sys.exit(main())
