"""``python -m suture`` runs the suture CLI."""

import sys

from suture.workers.cli import main

sys.exit(main())
