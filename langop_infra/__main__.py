"""``python -m langop_infra``: the ``langop-infra`` command."""

import sys

from langop_infra.cli.main import main

sys.exit(main())
