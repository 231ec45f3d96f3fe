"""``python -m langop_infra.cli``."""

import sys

from langop_infra.cli.main import main

sys.exit(main())
