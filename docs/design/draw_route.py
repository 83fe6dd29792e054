"""Draw the route of ``segmetrics evaluate foreground``'s arguments through the code (the design notes' figure).

The route follows the parser's ``Namespace`` given to ``app/single_folder.py: run_evaluate_foreground`` and every
value made from it (the run record, the dataset, the results, the output paths) from call to call, in the order the
code is written, each optional branch walked in turn. A *stay* is a module where that value is handled (a run of
calls inside one module is one stay); a *return* is a stay in a module the route had already left. A function
passed on and called back (the evaluator chosen as the program runs, the table writers that ``write_together``
calls back, the HTML report's drawing among them: ``HtmlReport.stage``) is not followed, as the program's own
reading of the code does not. The route is
written down below (``ROUTE``), read from the code; ``tests/docs/test_design_route.py`` checks that every function it
names is defined in the module it names, so a renamed or moved function fails there.

Run: ``python docs/design/draw_route.py [OUT.png]`` (matplotlib; default ``docs/design/route-evaluate-foreground.png``).
It also prints the counts: stays and returns with and without the ``--html`` branch, and as a program reads the code.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stay:
    module: str  # the path under segmetrics_torch/
    function: str  # the function (or Class.method) by which the value enters
    branch: str = ""  # the option whose branch this is ("" on every run)
    read: bool = True  # False: a stay the program's reading of the code does not see (said where it is written)
    also: str = ""  # what else the stay calls in its module, shown under the function


ROUTE = (
    Stay("app/single_folder.py", "run_evaluate_foreground"),
    Stay("registry.py", "parse_measures"),
    # then, with --output DIR, FolderRun.report in the same stay: the run as a report, which ends the run there (its
    # configuration and its run, app/report_config and app/report_run, are not followed, as they never were)
    Stay("app/folder_io.py", "FolderRun.from_args", also="--output: FolderRun.report"),
    Stay("datasets/prescan.py", "folder_names", "--output"),
    Stay("reports/output_safety.py", "checked_outputs"),
    Stay("app/folder_io.py", "FolderRun.open_dataset"),
    Stay("datasets/folders.py", "open_folders"),
    Stay("io.py", "find_pairs"),
    Stay("datasets/prescan.py", "check_pairing"),  # then scan_pairing and folder_names, in the same stay
    # the toolbox's result line, from the evaluation's results and the names (the program's reading does not see it:
    # the handler imports it through the functional package's face)
    Stay("functional/foreground/matlab_toolbox.py", "format_toolbox_line", "--toolbox-lines", read=False),
    Stay("app/folder_io.py", "FolderRun.write_outputs"),
    Stay("reports/tables.py", "scalar_row"),  # then per_image_rows and run_file_outputs
    Stay("reports/html_report.py", "HtmlReport.of_dataset", "--html"),
    Stay("registry.py", "higher_is_better", "--html"),  # the directions of the page's columns (html_columns)
    Stay("reports/files.py", "write_together"),
)


def counts(route: tuple[Stay, ...]) -> tuple[int, int, int]:
    """``(stays, modules, returns)`` of a route."""
    seen: set[str] = set()
    returns = 0
    for stay in route:
        returns += stay.module in seen
        seen.add(stay.module)
    return len(route), len(seen), returns


def draw(route: tuple[Stay, ...], out: Path) -> None:
    """A lane per module (in the order the route first enters them), a row per stay, time downwards."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lanes = list(dict.fromkeys(stay.module for stay in route))
    fig, ax = plt.subplots(figsize=(1.15 * len(lanes) + 1, 0.32 * len(route) + 1.6), dpi=100)
    seen: set[str] = set()
    xs, ys = [], []
    for i, stay in enumerate(route):
        x, y = lanes.index(stay.module), -i
        again = stay.module in seen
        seen.add(stay.module)
        xs.append(x)
        ys.append(y)
        edge = {"": "#555555", "--html": "#1f7a3a"}.get(stay.branch, "#8a6d00")
        ax.text(
            x,
            y,
            f"{i + 1}. {stay.function}" + (f"\n{stay.also}" if stay.also else ""),
            ha="center",
            va="center",
            fontsize=7,
            style="normal" if stay.read else "italic",
            bbox={
                "boxstyle": "round,pad=0.25",
                "fc": "#f6d3c8" if again else "#d8e6f3",
                "ec": edge,
                "ls": "--" if stay.branch else "-",
            },
        )
    ax.plot(xs, ys, color="#aaaaaa", lw=0.8, zorder=0)
    ax.set_xticks(range(len(lanes)), [m.replace("/", "/\n") for m in lanes], fontsize=7)
    ax.xaxis.tick_top()
    ax.set_yticks([])
    ax.set_xlim(-0.7, len(lanes) - 0.3)
    ax.set_ylim(-len(route) + 0.4, 0.6)
    for side in ("right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    without = tuple(s for s in route if s.branch != "--html")
    n, m, r = counts(route)
    n0, m0, r0 = counts(without)
    n1, _, r1 = counts(tuple(s for s in route if s.read))
    ax.set_title(
        "segmetrics evaluate foreground: the route of its arguments through the modules, in code order\n"
        f"{n0} stays in {m0} modules, {r0} returns without --html; {n} stays in {m} modules, {r} returns with it "
        f"({n1} and {r1} as a program reads the code: it does not see the stay in italics).\n"
        "Red: a return to a module already left; dashed: an optional branch (green: --html)",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("route-evaluate-foreground.png")
    without = tuple(s for s in ROUTE if s.branch != "--html")
    read = tuple(s for s in ROUTE if s.read)
    for label, route in (("without --html", without), ("with --html", ROUTE), ("as the program reads it", read)):
        n, m, r = counts(route)
        print(f"{label}: {n} stays in {m} modules, {r} returns")
    draw(ROUTE, out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
