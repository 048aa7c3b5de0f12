"""Run the ``accy`` command line: ``python -m accy backends``."""

import sys

from accy.cli.main import main

sys.exit(main())
