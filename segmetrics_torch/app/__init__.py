"""The ``segmetrics`` command: everything only the command uses, kept out of the library.

The library (``segmetrics_torch`` outside this package) never imports from here; this package imports the library.

* :mod:`.cli` -- the parser, ``main()`` (the console script), ``demo`` and the single-folder ``evaluate`` forms;
* :mod:`.meta_command` -- ``segmetrics meta`` (the meta-measure tests of a measure on a folder or the demo data);
* :mod:`.evaluation` -- pairing of folders, the decoding workers and the family runners (foreground, boundary,
  partition, proposals) the command and the report share;
* :mod:`.report_run` -- ``segmetrics evaluate --config``: configuration, pre-scan, cache, resume;
* :mod:`.report_render` -- the report's tables and figures from the cached results;
* :mod:`.tables` -- table columns, text / Markdown / LaTeX tables, JSON and CSV writers;
* :mod:`.plots` -- PR, threshold and proposal-recall figures (matplotlib);
* :mod:`.foreground_sums` -- the foreground accumulator without torchmetrics (start-up time);
* :mod:`.errors` -- :class:`~.errors.InputError`, the one error the command reports as ``error:`` with exit 2.

Importing this package imports nothing (building the parser imports no torch).
"""
