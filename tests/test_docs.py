"""The README and docs/*.md are executable documentation: their code runs, their commands, flags, links, paths
and names exist, and their tables of declared things list exactly what the code declares.

How a page marks its blocks (``<!-- run -->``, ``<!-- setup: … -->``, ``<!-- not run: … -->``) is said in
``tests/docs_blocks.py`` and in docs/README.md ("Documentation that runs").
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from tests.conftest import EXAMPLE, ROOT
from tests.docs_blocks import (
    DOCS,
    PAGES,
    Block,
    all_blocks,
    anchors,
    blocks,
    command_lines,
    links,
    name,
    names,
    prose,
    read,
    section,
    table,
)
from unitize.cli import build_parser, main

README = ROOT / "README.md"
#: the languages a page may use; "" is a figure (a directory tree, the module list), not code
LANGS = {"sh", "python", "toml", "sql", ""}
#: pages with no code block of their own, and why that is right
PROSE_ONLY = {
    "docs/README.md": "the index of the pages",
    "docs/architecture.md": "its module list and rules table are checked by the architecture tests below",
}
#: how many blocks may be marked <!-- not run: … --> over all pages
MAX_NOT_RUN = 3
#: imports a block may need from an optional extra: without it the block is skipped with this reason
OPTIONAL = {"dask": "the dask extra (pip install 'unitize[dask]')", "pygamma_agreement": "the gamma extra",
            "pandas": "pandas (the agree or dask extra)", "polars": "polars (the test extra)"}


# --- every page: languages, a tested block, links, paths and names --------------------------------------------


def test_there_are_pages_and_they_are_the_documented_ones() -> None:
    index = read(DOCS / "README.md")
    pages = [p for p in PAGES if p.parent == DOCS and p.name != "README.md"]
    assert len(pages) >= 8
    missing = [p.name for p in pages if f"]({p.name})" not in index or f"](docs/{p.name})" not in read(README)]
    assert not missing, f"docs/README.md and the README's Documentation list do not link {', '.join(missing)}"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_a_page_uses_known_languages_and_has_a_tested_block(page: Path) -> None:
    found = blocks(page)
    unknown = [f"{b.id} ```{b.lang}" for b in found if b.lang not in LANGS]
    assert not unknown, f"no test runs or checks these blocks: {', '.join(unknown)}; add the language to tests/test_docs.py"
    tested = [b for b in found if b.lang and b.mark("not run") is None]
    if name(page) in PROSE_ONLY:
        assert not tested, f"{name(page)} is listed as prose only but has code blocks: take it out of PROSE_ONLY"
    else:
        assert tested, f"{name(page)} has no tested code block; add one, or list it in PROSE_ONLY with the reason"


def test_prose_only_pages_exist() -> None:
    assert all((ROOT / p).is_file() for p in PROSE_ONLY)


def test_exemptions_are_few_and_say_why() -> None:
    exempt = [b for b in all_blocks() if b.mark("not run") is not None]
    assert all(b.mark("not run") for b in exempt), f"a <!-- not run: … --> mark without a reason: {[b.id for b in exempt]}"
    assert all(b.lang in ("python", "sql") for b in exempt), "only python and sql blocks run; others need no exemption"
    assert len(exempt) <= MAX_NOT_RUN, f"{len(exempt)} blocks are not run ({', '.join(b.id for b in exempt)}); make them run"


def test_marks_are_known() -> None:
    known = {"run": ("sh",), "setup": ("python", "sql"), "not run": ("python", "sql")}
    for b in all_blocks():
        for mark in b.marks:
            key = mark.partition(":")[0].strip()
            assert key in known, f"{b.id}: unknown mark <!-- {mark} -->"
            assert b.lang in known[key], f"{b.id}: <!-- {key} --> does nothing on a ```{b.lang} block"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest})")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {name(dest)})")
    assert not broken, f"{name(page)}: broken links: {'; '.join(broken)}"


_REPO_PATH = re.compile(r"^(?:unitize|tests|schemas|bench|tools|docs)/[\w./-]*$")


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_repository_path_in_the_text_exists(page: Path) -> None:
    shown = {n for n in re.findall(r"`([^`\s]+)`", prose(page)) if _REPO_PATH.match(n)}
    missing = sorted(p for p in shown if not (ROOT / p).exists())
    assert not missing, f"{name(page)} names files that do not exist: {', '.join(missing)}"


def resolve(dotted: str) -> Any:
    """The object a dotted name ``unitize.a.b.c`` names: the longest importable module, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ModuleNotFoundError:
            continue
        for attr in parts[n:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_python_name_in_the_text_exists(page: Path) -> None:
    shown = {m for code in re.findall(r"`([^`]+)`", prose(page)) for m in re.findall(r"\bunitize(?:\.[A-Za-z_]\w*)+", code)}
    missing = []
    for dotted in sorted(shown):
        try:
            resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(dotted)
    assert not missing, f"{name(page)} names what unitize does not have: {', '.join(missing)}"


# --- sh blocks: every command and flag exists; marked blocks run ------------------------------------------------


@functools.cache
def subparsers() -> dict:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


COMMANDS = [(b, line) for b in all_blocks("sh") for line in command_lines(b)]


def test_the_pages_show_commands() -> None:
    # a page set without commands would make the next test vacuous
    assert len(COMMANDS) >= 40 and len({b.page for b, _ in COMMANDS}) >= 8


@pytest.mark.parametrize("block,line", COMMANDS, ids=[f"{b.id}:{line[:60]}" for b, line in COMMANDS])
def test_every_command_and_flag_exists(block: Block, line: str) -> None:
    words = shlex.split(line)
    commands = subparsers()
    assert words[1] in commands, f"{block.id} shows `unitize {words[1]}`, which is not a command"
    known = commands[words[1]]._option_string_actions
    flags = [w.split("=", 1)[0] for w in words[2:] if w.startswith("-")]
    unknown = [f for f in flags if f not in known]
    assert not unknown, f"{block.id} shows {line!r}; `unitize {words[1]}` has no {', '.join(unknown)}"


# --- the workspace every runnable block runs in -----------------------------------------------------------------


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tdb-mini's study at the top, converted into out/; labels-mini converted into labels-out/; unitize/ beside them."""
    root = tmp_path_factory.mktemp("docs-workspace")
    shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
    (root / "unitize").symlink_to(ROOT / "unitize")
    assert main(["convert", str(root / "study.toml"), "--out", str(root / "out"), "-q"]) == 0
    labels = ROOT / "unitize" / "examples" / "labels-mini" / "study.toml"
    assert main(["convert", str(labels), "--out", str(root / "labels-out"), "-q"]) == 0
    return root


@pytest.fixture
def workspace(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the template, the working directory of the test."""
    ws = tmp_path / "ws"
    shutil.copytree(template, ws, symlinks=True)
    monkeypatch.chdir(ws)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return ws


def run_setup(block: Block) -> None:
    for words in block.setup:
        assert words[:1] == ["unitize"], f"{block.id}: a setup mark runs a unitize command, not {words[:1]}"
        assert main(words[1:]) == 0, f"{block.id}: setup {shlex.join(words)} failed"


RUN_SH = [b for b in all_blocks("sh") if b.mark("run") is not None]


def test_some_shell_blocks_run() -> None:
    assert len(RUN_SH) >= 8 and {name(README), "docs/export.md", "docs/report.md"} <= {b.page for b in RUN_SH}


@pytest.mark.parametrize("block", RUN_SH, ids=[b.id for b in RUN_SH])
def test_marked_shell_blocks_run_as_written(block: Block, workspace: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-euc", block.code], cwd=workspace, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{block.id} failed:\n{block.code}\n{done.stderr}"


# --- python blocks: every one runs; some results are checked against what the text says ------------------------

Check = Callable[[dict, Path], None]
#: (page, a line of the block) -> a check of the block's results (its variables, the workspace)
CHECKS: dict[tuple[str, str], Check] = {}


def check(page: str, anchor: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        CHECKS[(page, anchor)] = fn
        return fn

    return register


PYTHON = [b for b in all_blocks("python") if b.mark("not run") is None]


@pytest.mark.parametrize("block", PYTHON, ids=[b.id for b in PYTHON])
def test_python_blocks_run(block: Block, workspace: Path) -> None:
    run_setup(block)
    scope: dict = {}
    try:
        exec(compile(block.code, block.id, "exec"), scope)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{block.id} needs {OPTIONAL[e.name.split('.')[0]]}, which is not installed")
        raise
    for (page, anchor), fn in CHECKS.items():
        if page == block.page and anchor in block.code:
            fn(scope, workspace)


def test_every_check_finds_its_block() -> None:
    for page, anchor in CHECKS:
        found = [b for b in PYTHON if b.page == page and anchor in b.code]
        assert len(found) == 1, f"the check for {page} ({anchor!r}) matches {len(found)} blocks"


@check("README.md", "units.column_names")
def _readme_units(scope: dict, ws: Path) -> None:
    shown = ast.literal_eval(re.search(r"units\.column_names\s+#\s*(\[.*\])", read(README)).group(1))
    assert scope["units"].column_names == shown
    assert set(scope["units"].column("group").to_pylist()) == {"ama"}


def manifest_rows(out: Path) -> dict[str, int]:
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))["summary"]["unit_rows"]


@check("README.md", 'pd.read_parquet("out/units")')
def _readme_whole(scope: dict, ws: Path) -> None:
    want = manifest_rows(ws / "out")
    assert scope["every"]["setting"].astype(str).value_counts().to_dict() == want
    assert dict(zip(scope["stored"]["setting"].cast(str).to_list(), scope["stored"]["len"].to_list())) == want


@check("docs/outputs.md", 'pd.read_parquet("brat-out/labels")')
def _outputs_whole(scope: dict, ws: Path) -> None:
    want = manifest_rows(ws / "brat-out")
    got = {**{str(k): int(v) for k, v in scope["rows"].items()},
           **scope["labels"]["setting"].astype(str).value_counts().to_dict()}
    assert got == want and len(want) == 8
    assert scope["units"]["ana"].dtype == "UInt8" or str(scope["units"]["ana"].dtype) in ("uint8", "UInt8", "float64")
    assert "O" in set(scope["labels"]["ana"].astype(str)) and scope["found"].height == want["word-interval-labels"]


@check("docs/python-api.md", "result = unitize(corpus, settings)")
def _api(scope: dict, ws: Path) -> None:
    result = scope["result"]
    ama = result.matrix("ama", "Arg1", unit="word", approach="interval")
    assert isinstance(ama, pa.Table) and set(ama.column("group").to_pylist()) == {"ama"}
    # the last loop of the block streams label matrices: "O" marks units an annotator did not annotate
    assert "O" in scope["table"].column("ayse").to_pylist()
    assert result.layout.name == "wide" and result.findings
    assert (ws / "out" / "manifest.json").is_file()
    assert scope["manifest"]["summary"]["annotators"] == ["ayse", "burak", "cem"]


@check("docs/python-api.md", "alpha_u(study, 300)")
def _api_agree(scope: dict, ws: Path) -> None:
    code = next(b.code for b in PYTHON if b.page == "docs/python-api.md" and "alpha_u(study" in b.code)
    shown = re.search(r"^au\.alpha\s+#\s*([0-9.]+)", code, re.M).group(1)
    assert f"{scope['au'].alpha:.3f}" == shown  # as the block's comment says
    assert (ws / "out" / "agreement" / "results.parquet").is_file() and (ws / "out" / "report" / "index.html").is_file()
    assert scope["results"].num_rows and scope["files"]


def _shown(page: Path, name: str) -> object:
    """The value a page's block shows for ``name`` in its comment (``name  # value``)."""
    return ast.literal_eval(re.search(rf"^{name}\s+#\s*(.*)$", read(page), re.M).group(1))


@check("docs/python-api.md", "ppi.mean_estimate(y, yhat, unlabeled")
def _api_ppi(scope: dict, ws: Path) -> None:
    assert scope["shown"] == _shown(ROOT / "docs" / "python-api.md", "shown")


@check("docs/models.md", "densities = [")
def _models_estimates(scope: dict, ws: Path) -> None:
    assert scope["densities"] == _shown(ROOT / "docs" / "models.md", "densities")


@check("docs/models.md", "variants = [")
def _models_prompts(scope: dict, ws: Path) -> None:
    assert scope["variants"] == _shown(ROOT / "docs" / "models.md", "variants")


@check("docs/models.md", "flips = (")
def _models_stability(scope: dict, ws: Path) -> None:
    assert scope["flips"] == _shown(ROOT / "docs" / "models.md", "flips")


@check("docs/python-api.md", 'items.table("wide")')
def _api_items(scope: dict, ws: Path) -> None:
    assert scope["wide"].column_names[:2] == ["group", "item"] and scope["long"].column_names[-2:] == ["annotator", "value"]


@check("docs/labels.md", 'filters=[("group", "=", "target")]')
def _labels(scope: dict, ws: Path) -> None:
    code = next(b.code for b in PYTHON if b.page == "docs/labels.md")
    shown = [ast.literal_eval(m) for m in re.findall(r"(\{[^{}]*\})", code)]
    rows = {r["item"]: r for r in scope["t"]}
    assert shown and all(rows[s["item"]] == s for s in shown)


@check("docs/large-studies.md", "dd.read_parquet")
def _large(scope: dict, ws: Path) -> None:
    assert scope["units"].npartitions > 1 and "setting" in scope["units"].columns
    dense = scope["dense"]
    assert set(dense.column("group").to_pylist()) == {"ama"} and set(dense.column("layer").to_pylist()) == {"Arg1"}
    marks = scope["marks"]
    assert int(marks.loc[("ama", "Arg1"), "ayse"]) == sum(dense.column("ayse").to_pylist())  # the implicit rows are 0


@check("docs/agree.md", "keys[:3]")
def _agree_rows(scope: dict, ws: Path) -> None:
    code = next(b.code for b in PYTHON if b.page == "docs/agree.md" and "keys[:3]" in b.code)
    assert scope["keys"][:3] == ast.literal_eval(re.search(r"^keys\[:3\]\s+#\s*(\[.*\])$", code, re.M).group(1))


@check("docs/export.md", "krippendorff.alpha(data")
def _export_alpha(scope: dict, ws: Path) -> None:
    from unitize.agree import measure

    first = scope["first"]
    rows = measure("out", ["alpha"], settings=[first.setting], groups=[first.group]).to_pylist()
    (row,) = [r for r in rows if r["layer"] == first.layer and r["label"] is None and r["doc"] is None and r["annotator"] is None]
    assert scope["alpha"] == pytest.approx(row["value"], abs=1e-12)
    assert f"{row['value']:.3f}" in next(b.code for b in PYTHON if b.page == "docs/export.md")


@check("docs/adjudication.md", "csv.DictReader(f)")
def _inception_queue(scope: dict, ws: Path) -> None:
    """What the INCEpTION example says: ben's ORG is outvoted on Teatro Dal Verme, and the merge rests on 2 of 3."""
    first = scope["queue"][0]
    assert (first["text"], first["labels"], first["gold"]) == ("Teatro Dal Verme", "ana=LOC; ben=ORG; chen=LOC", "LOC")
    assert all(float(r["confidence"]) == pytest.approx(2 / 3, abs=1e-6) for r in scope["queue"] if r["why"] == "low confidence")


@check("docs/adjudication.md", "adjudicate(\"out\", \"majority\"")
def _adjudicate_api(scope: dict, ws: Path) -> None:
    import pyarrow.parquet as pq

    result = scope["result"]
    spans = pq.read_table(ws / "out" / "adjudication" / "spans.parquet")
    assert len(result.spans) == spans.num_rows > 0 and all(r["confidence"] < 0.8 or r["why"] != "low confidence" for r in result.review)


# --- sql blocks: DuckDB runs them on the workspace --------------------------------------------------------------

SQL = [b for b in all_blocks("sql") if b.mark("not run") is None]


@pytest.mark.parametrize("block", SQL, ids=[b.id for b in SQL])
def test_sql_blocks_run_in_duckdb(block: Block, workspace: Path) -> None:
    duckdb = pytest.importorskip("duckdb", reason="duckdb (in the test extra) is not installed")
    run_setup(block)
    con = duckdb.connect()
    statements = duckdb.extract_statements(block.code)
    assert statements, f"{block.id} holds no statement"
    for statement in statements:
        assert con.execute(statement).fetchall(), f"{block.id}: a query of the docs returns no row"


# --- toml blocks: parsed, valid, loadable ------------------------------------------------------------------------

TOML = all_blocks("toml")


@pytest.mark.parametrize("block", TOML, ids=[b.id for b in TOML])
def test_toml_blocks_are_valid_study_files(block: Block, tmp_path: Path) -> None:
    import jsonschema

    from unitize.adapters import get_adapter
    from unitize.config import from_mapping
    from unitize.items import parse_options

    data = tomllib.loads(block.code)
    jsonschema.validate(data, json.loads((ROOT / "schemas" / "config.schema.json").read_text(encoding="utf-8")))
    settings = from_mapping(data, base=tmp_path, source=block.id)
    if "format" in data.get("input", {}):  # a complete study file: its [input] keys are its format's options
        options = set(get_adapter(settings.format).options)
        foreign = set(data["input"]) - options - {"format", "names"}  # [input.names]: every format's (unitize.names)
        assert not foreign, f"{block.id}: {', '.join(sorted(foreign))} not options of format {settings.format!r}"
    if "items" in data:
        parse_options(data["items"])


# --- tables of declared things ----------------------------------------------------------------------------------


def first_names(rows: list[list[str]]) -> list[str]:
    return [n for row in rows for n in names(row[0])]


def test_the_metrics_table_lists_exactly_the_registry() -> None:
    from unitize.metrics import METRICS

    rows = table(section(DOCS / "agree.md", "Metrics"))
    listed = first_names(rows)
    assert sorted(listed) == sorted(m.name for m in METRICS), "docs/agree.md's metrics table differs from unitize.metrics.METRICS"
    assert len(listed) == len(set(listed))
    family = {n: row[2] for row in rows for n in names(row[0])}
    wrong = {m.name: (family[m.name], m.family.value) for m in METRICS if family[m.name] != m.family.value}
    assert not wrong, f"families differ from the registry's (table, registry): {wrong}"


def test_the_default_metrics_are_the_registry_defaults() -> None:
    from unitize.metrics import default

    (line,) = [b.code for b in all_blocks("sh") if b.page == "docs/agree.md" and "unitize agree out      " in b.code]
    shown = re.search(r"^unitize agree out\s+#\s*(.+)$", line, re.M).group(1)
    assert [m.strip() for m in shown.split(",")] == list(default())


def test_the_diagnostics_table_lists_every_code() -> None:
    from unitize.agree.diagnostics import CODES

    assert first_names(table(section(DOCS / "agree.md", "Diagnostics"))) == list(CODES)


def test_the_export_table_lists_every_format() -> None:
    from unitize.export.formats import FORMATS

    assert first_names(table(section(DOCS / "export.md", "Formats"))) == list(FORMATS)


def test_the_formats_table_lists_every_input_format() -> None:
    from unitize.adapters import available

    rows = table(section(DOCS / "formats.md", "Formats and their offset conventions"))
    assert sorted(names(row[0])[0] for row in rows) == sorted(available())


def test_the_targets_table_lists_every_writer() -> None:
    from unitize.writers import available

    rows = table(section(DOCS / "convert-format.md", "Targets"))
    assert sorted(names(row[0])[0] for row in rows) == sorted(available())


def test_the_finding_codes_table_lists_every_code_with_its_severity() -> None:
    from unitize.model.findings import CODES

    rows = table(section(DOCS / "outputs.md", "report.jsonl"))
    assert sorted(names(r[0])[0] for r in rows) == sorted(CODES)
    wrong = {names(r[0])[0]: r[1] for r in rows if r[1] != CODES[names(r[0])[0]][0]}
    assert not wrong, f"severities differ from unitize.model.findings.CODES: {wrong}"


# --- architecture: the module list names every module -----------------------------------------------------------

ARCHITECTURE = DOCS / "architecture.md"
#: packages whose every module the module list names too (add a package here when its entry lists its modules)
DESCRIBED = ("adjudicate", "agree", "config", "dataset", "estimate", "export", "items", "layouts", "metrics", "model", "output", "report", "run",
             "runtime", "spans", "units", "validate")


def module_list() -> str:
    (figure,) = [b.code for b in blocks(ARCHITECTURE) if b.lang == "" and "unitize/run/" in b.code]
    return figure


def modules(package: Path) -> list[Path]:
    """The modules and subpackages of a package (``__init__``, ``__main__`` and private ``_x.py`` left out)."""
    return sorted(
        p for p in package.iterdir()
        if (p.suffix == ".py" and not p.stem.startswith("_")) or (p.is_dir() and (p / "__init__.py").exists())
    )


def entries(figure: str) -> dict[str, str]:
    """The module list as {name at the line start: its text, continuation lines included}."""
    out: dict[str, str] = {}
    key = None
    for line in figure.splitlines():
        if line and not line[0].isspace():
            key = line.split()[0]
            out[key] = line
        elif key:
            out[key] += "\n" + line
    return out


def test_the_module_list_names_every_module_and_package() -> None:
    listed = entries(module_list())
    package = ROOT / "unitize"
    missing = [f"unitize/{p.name}{'/' if p.is_dir() else ''}" for p in modules(package)]
    missing = [m for m in missing if m not in listed]
    assert not missing, f"docs/architecture.md's module list does not name {', '.join(missing)}"
    gone = [m for m in listed if not (ROOT / m).exists()]
    assert not gone, f"docs/architecture.md's module list names what does not exist: {', '.join(gone)}"


@pytest.mark.parametrize("package", DESCRIBED)
def test_the_module_list_names_every_module_of_a_described_package(package: str) -> None:
    entry = entries(module_list())[f"unitize/{package}/"]
    missing = [p.name for p in modules(ROOT / "unitize" / package) if not re.search(rf"\b{re.escape(p.name)}", entry)]
    assert not missing, f"docs/architecture.md's entry for unitize/{package}/ does not name {', '.join(missing)}"


def test_the_rules_table_names_functions_that_exist() -> None:
    rows = table(section(ARCHITECTURE, "Where each rule of the unitization is implemented"))
    assert len(rows) >= 7
    for row in rows:
        module: Path | None = None  # a bare name (`word_units`, `accounting`) is defined in the module named before it
        for n in names(row[1]):
            if n.endswith((".py", "/")):
                module = ROOT / "unitize" / n
                assert module.exists(), f"docs/architecture.md names unitize/{n}, which does not exist"
            elif "." in n:
                resolve(f"unitize.{n}")
                module = ROOT / "unitize" / f"{n.rsplit('.', 1)[0].replace('.', '/')}.py"
            else:
                assert module is not None and module.suffix == ".py", f"{n}: a bare name follows a module"
                assert re.search(rf"^\s*def {n}\b", module.read_text(encoding="utf-8"), re.M), f"{n} is not defined in {module}"


def test_the_metrics_and_dataset_packages_are_described() -> None:
    text = prose(ARCHITECTURE)
    assert "`unitize/metrics/`" in text and "`unitize/dataset/`" in text


# --- the README: the front door ---------------------------------------------------------------------------------


def test_the_readme_stays_short() -> None:
    assert len(read(README).splitlines()) <= 400, "the README is the way in; the reference belongs in docs/"


def test_first_lines_give_make_demo_and_make_test() -> None:
    first = blocks(README)[0]
    assert first.lang == "sh" and [line.split("#")[0].strip() for line in first.code.strip().splitlines()] == ["make demo", "make test"]
    assert read(README).index("```sh") < read(README).index("## Your data")


def test_the_table_names_registered_formats_and_every_format_is_in_it() -> None:
    from unitize.adapters import available

    text = section(README, "Your data → the command")
    named = set(re.findall(r"`([a-z0-9-]+)`", text)) & set(available())
    assert named == set(available())
    for command in re.findall(r"`(unitize init --format [^`]+)`", text):
        assert command.split()[3] in available()


def test_how_to_run_the_installed_command_is_on_the_first_screen() -> None:
    first = read(README)[: read(README).index("## Installation")]
    assert "make shell" in first and ".venv/bin/activate" in first and ".venv/bin/unitize" in first


def tour_commands() -> list[str]:
    """The unitize commands the README's tour runs, in order, each once."""
    tour = section(README, "A tour on the bundled example")
    return list(dict.fromkeys(line.split()[1] for b in RUN_SH if b.page == "README.md" and b.code in tour for line in command_lines(b)))


def demo_commands() -> list[str]:
    """The unitize commands ``make demo`` runs, in order, each once (``$(U) COMMAND …`` lines of its recipe)."""
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8").split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    return list(dict.fromkeys(m.group(1) for m in re.finditer(r"^\t@?\$\(U\) ([a-z-]+)", recipe, re.M)))


def test_the_tour_runs_every_command_of_the_product_on_an_example() -> None:
    assert {"convert", "agree", "report", "export", "adjudicate", "convert-format", "plan", "estimate"} <= set(tour_commands())


def test_make_demo_tours_what_the_readme_tours() -> None:
    """``make demo`` runs the tour's commands in the tour's order (the tour adds the inspecting ones: info, validate)."""
    assert demo_commands() == ["convert", "agree", "report", "export", "adjudicate", "convert-format", "plan", "estimate"]
    assert [c for c in tour_commands() if c not in ("info", "validate")] == demo_commands()


def test_the_loss_matrix_is_the_writers_declared_traits() -> None:
    """docs/convert-format.md's loss matrix is what tools/loss_matrix.py generates from the writers (regenerate it with
    python tools/loss_matrix.py --update when a writer changes)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("loss_matrix", ROOT / "tools" / "loss_matrix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.documented() == module.table()
