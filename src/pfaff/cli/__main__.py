"""``python -m pfaff.cli``: the ``pfaff`` command."""

import sys

from pfaff.cli import main

sys.exit(main())
