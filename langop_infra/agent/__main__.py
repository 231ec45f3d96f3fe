"""``python -m langop_infra.agent serve``: the built-in agent runtime."""

import sys

from langop_infra.agent._serve import main

if __name__ == "__main__":
    sys.exit(main())
