"""``python -m xskbench``."""

from xskbench.cli import main

raise SystemExit(main())
