import sys

from freshstack_hf.cli.main import main

sys.exit(main())
