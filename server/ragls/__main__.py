"""`python -m ragls` runs the command-line interface."""

from ragls.cli import main

raise SystemExit(main())
