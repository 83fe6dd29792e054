"""Datasets on disk: pairing prediction and ground-truth files, checking them before a run, decoding them in parallel.

What the ``segmetrics`` command reads a dataset folder pair with, usable from a script:

* :mod:`.pairing`: the file kinds of each family (``PREDICTION_FORMATS``, ``GT_FORMATS``), matching two folders by
  file stem (suffixes, prefixes or a regular expression), and the formats a boundary or partition folder pair is
  read in;
* :mod:`.folders`: both in one call (:func:`~.folders.open_folders`): a folder pair paired, pre-scanned, and the
  images to evaluate, as every single-folder ``segmetrics evaluate`` form opens its dataset;
* :mod:`.prescan`: the pairing's errors (no common name, unmatched files: :func:`~.prescan.check_pairing`, naming
  them), a pass over the files' headers (no pixel decoded) that reports every unpaired, unreadable or mis-sized file
  at once, and the dataset and method names a folder path suggests;
* :mod:`.decoding`: the pairs decoded into arrays, in worker processes when asked, in order, with bounded memory;
* :mod:`.label_maps`: checks of decoded label maps (soft maps given as partitions, hierarchies of unequal depth).

Errors are :class:`segmetrics_torch.errors.InputError`, each naming the file and what is wrong.
"""

#: the package is a folder of public modules (docs/api.md); it hands no names on itself
__all__: list[str] = []
