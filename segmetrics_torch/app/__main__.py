"""``python -m segmetrics_torch.app``: the ``segmetrics`` command, as the installed entry point and
``python -m segmetrics_torch.app.cli`` run it (where the scripts folder is not on ``PATH``)."""

from .cli import main

raise SystemExit(main())
