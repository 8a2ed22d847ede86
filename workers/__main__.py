"""``python -m workers`` runs the suture CLI."""

import sys

from workers.cli import main

sys.exit(main())
