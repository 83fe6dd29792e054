"""Results as papers print them: tables, figures and whole reports of evaluated methods x datasets.

The ``segmetrics`` command writes its outputs through these modules, and a script can call them on results it
computed itself (a dict of a Metric's ``compute()`` per method):

* :mod:`.tables`: the rows of a result (:func:`~.tables.scalar_row`), Markdown / LaTeX tables with the best three of
  each column marked (:func:`~.tables.format_markdown_table`, :func:`~.tables.format_latex_table`), the console table,
  JSON and CSV writers (CSV rows upserted by key);
* :mod:`.figures`: PR, ROC and threshold curves, proposal recall, boundary-distance distributions (matplotlib);
* :mod:`.combined`: one table of methods x datasets (Markdown, LaTeX, CSV, Excel) and its figure grid;
* :mod:`.report`: a report folder of every (dataset, family) table and figure from the records of a run;
* :mod:`.html_report`: the HTML error browser of a run (``--html``), its error overlays in :mod:`.overlays`;
* :mod:`.protocol_report`: the reports of methods x datasets of the two protocol families (semantic boundaries,
  DAVIS), from their configuration to the report folder; :mod:`.video_figures`: DAVIS's per-sequence figure;
* :mod:`.files`: writing a file atomically with the mode the user's umask gives, and file-name-safe names;
* :mod:`.output_safety`: no output replaces, deletes or pollutes an input; :mod:`.named_inputs`: the files a run
  reads by name, recorded as they are read.

Example:
    >>> from segmetrics_torch.reports.tables import format_markdown_table
    >>> rows = {"ours": {"mae": 0.031, "s_measure": 0.912}, "peer": {"mae": 0.045, "s_measure": 0.897}}
    >>> print(format_markdown_table(rows, [("s_measure", "S-measure"), ("mae", "MAE")], lower_is_better=["mae"]))
    | method | S-measure ↑ | MAE ↓ |
    |---|---:|---:|
    | ours | **0.9120** | **0.0310** |
    | peer | 0.8970 | 0.0450 |
"""

#: the package is a folder of public modules (docs/api.md); it hands no names on itself
__all__: list[str] = []
