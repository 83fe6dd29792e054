"""The ``segmetrics`` command: everything only the command uses, kept out of the library.

The library (``segmetrics_torch`` outside this package) never imports from here; this package imports the library.

* :mod:`.cli` -- ``main()`` (the console script: errors, exit codes, interrupts); :mod:`.cli_parser` -- the parser
  of every subcommand (each handler imported when its subcommand runs); :mod:`.cli_options` -- the option builders
  and argparse types they share, and the report form's options (argparse is used in these three alone);
  :mod:`.launch` -- torchrun's environment, read without torch; :mod:`.single_folder` -- the handlers of the
  single-folder ``evaluate`` forms, on :mod:`.folder_io` (the checked outputs, pairing, pre-scan, progress and
  writers they share); :mod:`.demo_command` -- ``segmetrics demo``;
* :mod:`.meta_command` -- ``segmetrics meta`` (the meta-measure tests of a measure on a folder or the demo data);
* :mod:`.runner` -- the one runner of every ``evaluate`` form (sharding, decoding, progress) and
  ``FAMILY_EVALUATORS``, the registry of the families; :mod:`.family_job` -- what an evaluator receives and returns;
  :mod:`.evaluation` (foreground, boundary, partition), :mod:`.proposal_evaluation`, :mod:`.surface_evaluation` --
  the family evaluators;
* :mod:`.report_run` -- ``segmetrics evaluate --config``: running the plan (cache or compute, resume) and writing the
  report; :mod:`.report_args` -- the report's command-line form (the configuration its options make, the
  single-folder form's files from a report);
* :mod:`.report_config` -- the report's configuration (schema, checks, YAML / JSON loaders);
* :mod:`.report_plan` -- the report's jobs: pairing, formats, pre-scan, fingerprints;
* :mod:`.foreground_rows` -- each image's row of the foreground suite and its NaN S-measure images (the sums are
  the library's torchmetrics-free :class:`~segmetrics_torch.functional.ForegroundSums`).

What a script could use as well lives in the library, public: pairing, pre-scanning and decoding dataset folders
(:mod:`segmetrics_torch.datasets`), the tables, figures, report folders, the cache of results and the output-safety
rule (:mod:`segmetrics_torch.reports`), the error of unusable input (:class:`segmetrics_torch.errors.InputError`,
which the command prints as one ``error:`` line with exit status 2), compiling the kernels ahead
(:mod:`segmetrics_torch.warmup`).

Importing this package imports nothing (building the parser imports no torch), except that it installs a
``sys.excepthook`` for ``KeyboardInterrupt`` only: a Ctrl-C that lands while the command's modules are still being
imported (before ``main()`` can catch it) prints ``error: interrupted`` instead of a traceback; the interpreter then
ends by SIGINT, which a shell reports as exit status 130. Every other exception goes to the previous hook. Likewise a
``sys.unraisablehook`` raises a swallowed ``KeyboardInterrupt`` (one that landed in a destructor or an after-fork
hook) again as SIGINT instead of printing it.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import TracebackType
from typing import Any


def _quiet_interrupt(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None, _previous: Any = sys.excepthook
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print("error: interrupted", file=sys.stderr)
        return
    _previous(kind, value, tb)


def _requeue_interrupt(unraisable: Any, _previous: Any = sys.unraisablehook) -> None:
    # a Ctrl-C that lands where Python cannot raise it (e.g. in the logging module's lock release after os.fork
    # starts a decoding worker) would be printed as "Exception ignored ... KeyboardInterrupt" with a traceback and
    # then lost: raise SIGINT again so that it surfaces at the next safe point and the command ends with 130
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        # raised from another thread, so that the handler runs in the main thread at its next safe point, after this
        # hook returned (raised here, it ran inside the hook, where Python could only print "Exception ignored");
        # delayed, because Thread.start waits for the thread, and a signal landing in that wait was lost the same way
        timer = threading.Timer(0.05, signal.raise_signal, args=(signal.SIGINT,))
        timer.daemon = True
        try:
            timer.start()
        except KeyboardInterrupt:  # a further Ctrl-C by the user: the timer is already queued
            pass
        return
    _previous(unraisable)


if sys.excepthook is sys.__excepthook__:
    sys.excepthook = _quiet_interrupt
if sys.unraisablehook is sys.__unraisablehook__:
    sys.unraisablehook = _requeue_interrupt
