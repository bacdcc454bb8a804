import sys

from fusionlint.evidence.sweep.runner import main

sys.exit(main())
