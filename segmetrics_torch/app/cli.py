"""The ``segmetrics`` command: a demo on embedded synthetic data, and evaluation of prediction folders.

Usage::

    segmetrics demo [--n 24] [--device auto] [--seed 0]
    segmetrics evaluate --config eval.yaml [--output DIR] [--device cpu] [--workers N] [--allow-missing] [--skip-bad]
                        [--resize] [--no-cache | --cache DIR] [--figures png,pdf|none] [--xlsx] [--highlight M]
                        [--json FILE] [--csv FILE] [--per-image-csv FILE]   (many methods x datasets: a report;
                                                                             see segmetrics_torch.app.report_run)
    segmetrics evaluate --gt DIR --pred [NAME=]DIR [--pred ...]
                        [--family foreground|boundary|partition|proposals|surface]
    segmetrics evaluate foreground (alias sod) --pred DIR --gt DIR [--json FILE] [--csv FILE] [--per-image-csv FILE]
                            [--output DIR] [--measures LIST] [--allow-missing] [--skip-bad] [--resize]
                            [--pred-suffix S] [--gt-suffix S] [--pred-prefix P] [--gt-prefix P] [--pair-regex RE]
                            [--device cpu] [--batch-size 16] [--no-progress] [--name NAME] [--dataset NAME]
                            (options of both forms: docs/evaluate.md)
    segmetrics evaluate boundary --pred DIR --gt DIR [--gt-labels] [--thresholds 99] [--max-dist 0.0075] [--no-thin]
                                 [--out-dir DIR] [--json FILE] [--device cpu] [--batch-size 8] [--allow-missing]
                                 [--no-progress] [--name NAME]
    segmetrics evaluate partition --pred DIR --gt DIR [--measures LIST] [--thresholds 99 | --num-regions LIST]
                                  [--rule seism|bsr] [--gamma-obj 0.9] [--max-dist 0.0075] [--json FILE]
                                  [--device cpu] [--batch-size 8] [--allow-missing] [--no-progress] [--name NAME]
    segmetrics evaluate proposals --pred DIR --gt DIR [--gt-classes DIR] [--counts LIST] [--boundary]
                                  [--bound-th 0.008] [--void-label 255] [--chunk-size P] [--json FILE] [--plot FILE]
                                  [--device cpu] [--allow-missing] [--no-progress] [--name NAME]
    segmetrics meta partition --gt DIR [--ucm DIR] [--measures LIST] [--seed 0] [--json FILE]
    segmetrics meta foreground (--demo | --pred DIR [--pred DIR ...] --gt DIR) [--measures LIST] [--seed 0]
                               [--json FILE]          (meta-measures: see segmetrics_torch.app.meta_command)

Exit status: 0 on success; 2 for usage and input errors (a missing folder, unmatched files, unreadable or mismatched
images, an unavailable device), reported as one ``error: ...`` line on stderr; 1 for unexpected errors (with the
traceback); 130 when interrupted. The table and a summary go to stdout, warnings and the progress bar to stderr.

``evaluate boundary`` is the BSDS500 boundary benchmark: predictions are soft boundary maps (images) or BSR
``ucm2`` .mat files, ground truth BSDS ``groundTruth`` .mat files or PNG boundary (or, with ``--gt-labels``, label)
maps; ``--out-dir`` writes BSR's ``eval_bdry.txt``, ``eval_bdry_thr.txt`` and ``eval_bdry_img.txt``.

``evaluate partition`` scores partitions with SEISM's measures: label-map images are flat partitions (one value per
measure), BSR ``ucm2`` or ``segs`` .mat files hierarchies (ODS / OIS / AP per measure and the BSR region benchmark);
ground truth BSDS ``groundTruth`` .mat files (their ``Segmentation``) or label-map images.

``evaluate proposals`` scores ranked pools of object proposals (.npz mask stacks or label images) against annotated
objects (instance label images with a void label, or .npz) with the MCG protocol, and ``--plot`` draws the recall
curves against the number of proposals.

This module runs the parsed command (the parser is :mod:`.cli_parser`) and turns its failures into exit codes;
reading is :mod:`segmetrics_torch.io`, measures are :class:`segmetrics_torch.ForegroundMeasures`,
:mod:`segmetrics_torch.functional.boundary`,
:class:`segmetrics_torch.PartitionMeasures` and :class:`segmetrics_torch.HierarchyMeasures`, tables and files are
:mod:`segmetrics_torch.reports.tables`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

from ..environment import check_environment
from ..errors import InputError
from ..io import set_max_image_pixels
from ..ops.backend import use_backend
from ..reports.named_inputs import run_ledger
from .cli_parser import build_parser
from .launch import launched

if TYPE_CHECKING:  # annotations only: building the parser imports no torch
    pass

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``segmetrics`` command line.

    Args:
        argv: arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 ok, 2 usage or input error, 1 unexpected error, 130 interrupted (Ctrl-C or SIGTERM:
        :data:`INTERRUPTS`). ``--help`` and argparse's
        own usage errors raise ``SystemExit`` (0 and 2) as usual.
    """
    _passive_idle_threads()
    stdout, stderr = sys.stdout, sys.stderr
    # started with a standard stream closed (`segmetrics ... >&-`), Python sets it to None: output nobody reads
    guarded = _GuardedStdout(stdout if stdout is not None else _discarded(1))
    sys.stdout = guarded
    if stderr is None:
        sys.stderr = _discarded(2)
    previous_handlers = _record_interrupts()
    try:
        with _torchrun_session(), warnings.catch_warnings():  # under torchrun: one rank of the process group
            warnings.showwarning = _warning_line
            # the library's warnings are shown once per place, whatever filters the caller set (a test's "error");
            # the categories Python hides by default (ResourceWarning of a file an interruption left open, ...) stay
            # hidden
            for category in (RuntimeWarning, UserWarning):
                warnings.simplefilter("default", category)
            status = _main(argv)
        guarded.flush()  # a full disk shows here, not as a traceback at the interpreter's exit
        return status
    except KeyboardInterrupt:  # during start-up (importing torch) or argument parsing
        print("error: interrupted", file=sys.stderr)
        return 130
    except InputError as error:  # standard output could not be written
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)


def _torchrun_session() -> contextlib.AbstractContextManager[None]:
    """Under torchrun, :func:`.distributed.session` (joining the process group); else nothing. :mod:`.distributed`
    imports torch, so it is imported only under torchrun: ``--help`` and usage errors answer without torch."""
    if not launched():
        return contextlib.nullcontext()
    from . import distributed

    return distributed.session()


#: set when SIGINT or SIGTERM arrives during a run: an exception raised after it is the interruption's, whatever its
#: type; ``pid``: the command's process (a forked decoding worker inherits the handler)
_INTERRUPT = {"seen": False, "pid": 0}

#: what stops a run as Ctrl-C does: SIGINT, and SIGTERM (``kill``, a job scheduler's time limit, torchrun stopping
#: the other ranks when one fails): exit 130, no half-written file, the cache valid
INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _INTERRUPT["pid"]:  # a forked decoding worker: SIGTERM is how the run stops it
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _INTERRUPT["seen"] = True
    raise KeyboardInterrupt


def _record_interrupts() -> dict[int, Any]:
    """Install a handler of :data:`INTERRUPTS` that raises KeyboardInterrupt as Python's does on Ctrl-C and remembers
    the signal (numba turns an interruption while it writes a compiled kernel to its cache into ``RuntimeError: no
    compiled object yet``, with no KeyboardInterrupt left in the chain); returns the previous handlers (none off the
    main thread, where Python cannot install one)."""
    _INTERRUPT.update(seen=False, pid=os.getpid())
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, _on_interrupt) for signum in INTERRUPTS}


def _warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: IO[str] | None = None,
    line: str | None = None,
) -> None:
    """A library warning as the command's other warnings: one ``warning:`` line on stderr, no source location."""
    text = " ".join(str(message).split())
    print(f"warning: {text}", file=sys.stderr)


def _discarded(descriptor: int) -> IO[str]:
    """A text stream to the null device for standard stream ``descriptor`` (1 or 2) that the command was started
    without (``>&-``, ``2>&-``): what the command prints there is dropped, as output nobody reads, and the run writes
    its files and exits as usual (0 when it succeeds), as when the reader of a pipe goes away.

    The descriptor itself, when closed, is pointed at the null device too: otherwise the next file the run opens
    would take its number, and whatever writes to descriptor 1 or 2 (a forked decoding worker, a C library) would
    write into that file.
    """
    null = os.open(os.devnull, os.O_WRONLY)
    if null != descriptor:  # the descriptor is taken (or a lower one was free): fill it only if it is closed
        try:
            os.fstat(descriptor)
        except OSError:
            os.dup2(null, descriptor)
        os.close(null)
    return open(os.devnull, "w", encoding="utf-8")


class _GuardedStdout:
    """Standard output for the command: ordinary faults of the reader are not bugs.

    * The reader went away (``segmetrics ... | head -1``, ``| true``): the rest of the output is discarded (the
      descriptor is pointed at ``/dev/null``, so no later flush fails either) and the run goes on to write its
      files and exits 0, as the work was done.
    * Any other write error (``> /dev/full``: no space left; an I/O error) is an :class:`InputError`, exit 2:
      ``error: cannot write to standard output: no space left on device``.
    """

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            self._guard(lambda: self._stream.write(text))
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            self._guard(self._stream.flush)

    def _guard(self, action: Callable[[], object]) -> None:
        try:
            action()
        except BrokenPipeError:
            self._gone = True
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self._stream.fileno())
                os.close(devnull)
            except (OSError, ValueError, AttributeError):  # no descriptor (a test's capture): nothing to redirect
                pass
        except OSError as error:
            reason = (error.strerror or str(error)).lower()
            raise InputError(f"cannot write to standard output: {reason}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _passive_idle_threads() -> None:
    """Let idle OpenMP threads sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``), unless the user set a policy.

    torch and numba's kernels each keep a pool of OpenMP threads, and by default a thread that has finished its share
    of a parallel loop spins for a while, waiting for more. On a few cores shared with other work the spinning threads
    take the cores that the computing ones need: ``segmetrics meta partition`` (thousands of short parallel regions
    of both pools) used 84 s of CPU in 90 s on a shared 2-core machine, and 31 s in 30 s passive, with the same
    output (the policy changes how threads wait, not how many there are or what they compute). OpenMP reads the
    variable once, when torch loads it, so it is set before any command imports torch (none has at this point).
    """
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def _main(argv: Sequence[str] | None) -> int:

    enabled = gc.isenabled()
    gc.disable()  # building the parser imports torch (~1 s): no garbage worth collecting meanwhile
    try:
        parser = build_parser()
    finally:
        if enabled:
            gc.enable()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    _announce_compilation()
    try:
        _check_environment(args)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if handler is None:
        (getattr(args, "subparser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        # the files this invocation reads by name (inputs no output may replace); the library's backend for the run
        with run_ledger(), _backend(args), _image_limit(args):
            status = handler(args)
        if argv is None:
            # run as a program: freeze the heap, so that the interpreter's final collections skip the millions of
            # objects of torch, numba and matplotlib (~0.5 s at exit); never in-process (tests), where it would
            # keep garbage alive
            gc.freeze()
        return status
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if _interrupted(error) or _INTERRUPT["seen"]:
            # Ctrl-C while a compiled (numba) kernel ran surfaces as SystemError("... returned a result with an
            # exception set") whose context is the KeyboardInterrupt: an interruption, not a bug
            print("error: interrupted", file=sys.stderr)
            return 130
        if isinstance(error, OSError) and error.filename is not None:
            # a file or folder the user named cannot be read or written (permissions, a folder where a file is
            # expected, a vanished file): an input problem, named, not a traceback
            print(f"error: {_os_error_line(error)}", file=sys.stderr)
            return 2
        traceback.print_exc()
        print(f"error: unexpected {type(error).__name__}: {error} (a bug? please report it)", file=sys.stderr)
        return 1


class _CompileNote(logging.Handler):
    """Prints the library's one-time compilation message as a ``note:`` line on stderr (once per process)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.INFO:
            print(f"note: {record.getMessage()}; this run waits for it, later runs do not", file=sys.stderr)


def _announce_compilation() -> None:
    """A cold numba cache makes the first run compile the kernels (seconds to a minute): say so, once."""
    logger = logging.getLogger("segmetrics_torch.compile")  # ops._kernels._compile_log.LOGGER_NAME
    if not any(isinstance(h, _CompileNote) for h in logger.handlers):
        logger.addHandler(_CompileNote())
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _backend(args: argparse.Namespace) -> contextlib.AbstractContextManager[None]:
    """``--backend NAME`` of the ``evaluate`` forms: the library's backend for this run, set through its public API
    (:func:`segmetrics_torch.ops.use_backend`, restored afterwards: the command may run in-process, as in the tests),
    never through the environment. Without the option the library's own setting stands (``SEGMETRICS_BACKEND``,
    default ``auto``)."""
    name = getattr(args, "backend", None)
    if name is None:
        return contextlib.nullcontext()

    return use_backend(name)


@contextlib.contextmanager
def _image_limit(args: argparse.Namespace) -> Iterator[None]:
    """``--max-image-pixels`` as the readers' limit for this run (:func:`segmetrics_torch.io.set_max_image_pixels`;
    the decoding workers are given it at their start), the caller's limit restored after it: never the
    environment, which would outlive the run in a caller's process (an in-process run of the tests left its limit to
    every later test)."""
    pixels = getattr(args, "max_image_pixels", None)
    if pixels is None:
        yield
        return

    previous = set_max_image_pixels(pixels)
    try:
        yield
    finally:
        set_max_image_pixels(previous)


def _check_environment(args: argparse.Namespace) -> None:
    """Settings that reach the libraries through the environment, checked (and set) before any of them loads.

    A subcommand that runs in one process (``one_process``: demo, warmup, meta, the DAVIS and semantic-boundary
    forms) is refused under torchrun. ``--max-image-pixels`` must be positive (:func:`_image_limit` sets it for the
    run); a value the libraries would reject later with an unexplained error is an input error naming the variable:
    a non-positive ``NUMBA_NUM_THREADS`` (numba raises "Number of threads specified must be > 0" at import; a
    non-number only makes numba warn and use its default, which stays so) and a value a ``SEGMETRICS_*`` variable
    does not accept (:mod:`segmetrics_torch.environment`: ``SEGMETRICS_BACKEND=Tensor`` is not read as the default
    without a word).
    """

    one_process = getattr(args, "one_process", None)
    if one_process is not None and launched():  # every rank would do the whole work and write the same files
        raise InputError(f"{one_process} runs in one process: run it without torchrun")
    pixels = getattr(args, "max_image_pixels", None)
    if pixels is not None and pixels < 1:
        raise InputError(f"--max-image-pixels {pixels}: expected a positive number of pixels")
    try:
        check_environment()  # every SEGMETRICS_* variable, here rather than wherever the library first reads it
    except ValueError as error:
        raise InputError(str(error)) from None
    threads = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    try:
        count = int(threads) if threads else None
    except ValueError:
        count = None
    if count is not None and count < 1:
        raise InputError(
            f"NUMBA_NUM_THREADS={threads}: numba needs a positive number of threads; unset the variable or give a "
            "count such as 2"
        )


def _interrupted(error: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in ``error``'s chain of causes and contexts."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _os_error_line(error: OSError) -> str:
    what = error.strerror or type(error).__name__
    target = f"{error.filename} -> {error.filename2}" if error.filename2 is not None else str(error.filename)
    return f"cannot access {target}: {what}"


if __name__ == "__main__":
    raise SystemExit(main())
