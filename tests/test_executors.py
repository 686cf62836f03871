"""--executor (issue 15): local, processes:2 and dask write the same outputs and measure the same agreement.

Each study is converted and measured once per executor into the same path (moved aside after),
so that the manifests differ in their ``run`` section only. No timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tests.conftest import CORPORA, EXAMPLE, ROOT, needs_shared
from unitize.agree import agree
from unitize.cli import main
from unitize.config import Settings, load_toml, override
from unitize.errors import RunError
from unitize.run import convert
from unitize.runtime import executors
from unitize.runtime.executors import DaskExecutor, Executor, LocalExecutor, ProcessExecutor, get_executor
from unitize.units import spaces

HAS_DASK = importlib.util.find_spec("distributed") is not None
NO_DASK = "dask is not installed (pip install 'unitize[dask]'; make test installs it)"
BRAT_MINI = ROOT / "unitize" / "examples" / "brat-mini" / "study.toml"
BRATIAA = CORPORA / "bratiaa-example" / "example-files" / "example-project"
METRICS = ["alpha-u", "alpha", "fleiss", "cohen", "cochran-q", "u-alpha", "span-f1"]


def square(x: int) -> int:
    return x * x


@pytest.fixture(scope="module")
def pools():
    """One executor of each kind for the module (a pool or cluster starts once)."""
    made: dict[str, Executor] = {"local": LocalExecutor(), "processes:2": ProcessExecutor(2)}
    if HAS_DASK:
        made["dask"] = DaskExecutor(workers=2)
    yield made
    for pool in made.values():
        pool.close()


def run_all(settings: Settings, tmp: Path, pools: dict[str, Executor]) -> dict[str, Path]:
    """Convert and measure (with bootstrap intervals) with every executor; each result moved to tmp/<name>."""
    done = {}
    for name, pool in pools.items():
        out = tmp / "out"
        _, manifest = convert(override(settings, out=out), executor=pool)
        assert manifest is not None and manifest["run"]["executor"] == pool.name
        agree(out, metrics=METRICS, by_doc=True, ci=executors_ci(), executor=pool)
        done[name] = out.rename(tmp / name.replace(":", "-"))
    return done


def executors_ci():
    from unitize.agree import Options

    return Options(level=0.9, replicates=200, seed=7)


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_same(done: dict[str, Path]) -> None:
    reference = files(done["local"])
    assert any(name.startswith("units/") for name in reference) and "agreement/results.parquet" in reference
    ref_manifest = json.loads(reference.pop("manifest.json"))
    ref_manifest.pop("run")
    for name, path in done.items():
        got = files(path)
        manifest = json.loads(got.pop("manifest.json"))
        manifest.pop("run")
        assert manifest == ref_manifest, name
        assert sorted(got) == sorted(reference), name
        different = [f for f in reference if got[f] != reference[f]]
        assert not different, f"{name}: {different} differ from the local run"
        values = pq.read_table(path / "agreement" / "results.parquet").column("value").to_numpy()
        assert np.array_equal(values, pq.read_table(done["local"] / "agreement" / "results.parquet").column("value").to_numpy(), equal_nan=True)


@pytest.mark.parametrize("study", [EXAMPLE / "study.toml", BRAT_MINI], ids=["tdb-mini", "brat-mini"])
def test_every_executor_writes_and_measures_the_same(study: Path, tmp_path: Path, pools, monkeypatch) -> None:
    if not HAS_DASK:
        pytest.skip(NO_DASK)
    monkeypatch.setattr(spaces, "TOKENIZE_CHUNK_CHARS", 500)  # several tokenization tasks even for a small study
    settings = load_toml(study)
    assert len(spaces.chunks(np.array([400, 400, 400, 400]))) == 2
    done = run_all(settings, tmp_path, pools)
    assert_same(done)
    results = pq.read_table(done["local"] / "agreement" / "results.parquet").to_pylist()
    assert any(r["ci_low"] is not None for r in results) and any(r["metric"] == "alpha-u" for r in results)


@needs_shared
def test_a_real_project_through_every_executor(tmp_path: Path, pools) -> None:
    """The bratiaa project (4 annotators × 7 documents, real brat data) through all three executors."""
    if not BRATIAA.is_dir():
        pytest.skip(f"{BRATIAA} is absent")
    if not HAS_DASK:
        pytest.skip(NO_DASK)
    settings = Settings(format="brat", input={"annotations": BRATIAA}, base=tmp_path, tokenizer="spacy:en", modes=("separate", "labels"))
    assert_same(run_all(settings, tmp_path, pools))


class _Split(Executor):
    """In this process, but cut like a parallel executor of ``workers`` workers."""

    def __init__(self, workers: int):
        self.workers, self.name = workers, f"split:{workers}"

    @property
    def parallel(self) -> bool:
        return True


def test_agreement_does_not_depend_on_how_the_groups_are_cut(tmp_path: Path) -> None:
    """Bootstrap intervals and every other value: the same for one task per group and one per setting."""
    out = tmp_path / "out"
    convert(override(load_toml(EXAMPLE / "study.toml"), out=out))
    tables = []
    for pool in (LocalExecutor(), _Split(1), _Split(3), _Split(50)):
        result = agree(out, metrics=METRICS, by_doc=True, ci=executors_ci(), dest=tmp_path / pool.name, executor=pool)
        tables.append(result.results)
    for t in tables[1:]:  # NaN rows: equal as JSON (NaN != NaN for Table.equals)
        assert t.to_pylist().__repr__() == tables[0].to_pylist().__repr__()


def test_map_keeps_the_order_and_the_pool_is_closed(pools) -> None:
    items = list(range(40))
    for pool in pools.values():
        assert pool.map(square, items) == [x * x for x in items]
        assert pool.map(square, []) == []
    with get_executor("processes:2") as pool:
        assert (pool.name, pool.workers, pool.parallel) == ("processes:2", min(2, executors.cores()), True)
        assert pool.map(square, [3, 1, 2]) == [9, 1, 4]
    assert pool._pool is None
    assert (get_executor(None).name, get_executor("local").workers) == ("local", 1)
    assert get_executor("processes").workers == executors.cores()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("foo", "--executor: unknown 'foo'; use local, processes[:N] or dask[:ADDRESS]"),
        ("local:3", "--executor: unknown 'local:3'"),
        ("processes:0", "N must be a positive number"),
        ("processes:two", "N must be a positive number"),
        ("dask:", "give a scheduler address"),
    ],
)
def test_a_bad_spec_exits_2_with_the_message(spec: str, message: str, tmp_path: Path, capsys) -> None:
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(tmp_path / "o"), "--executor", spec, "-q"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    convert(override(load_toml(EXAMPLE / "study.toml"), out=tmp_path / "out"))
    assert main(["agree", str(tmp_path / "out"), "--executor", spec, "-q"]) == 2
    assert message in capsys.readouterr().err


def test_run_executor_in_the_study_and_the_flag_over_it(tmp_path: Path, capsys) -> None:
    study = tmp_path / "study.toml"
    text = (EXAMPLE / "study.toml").read_text(encoding="utf-8")
    for key in ("annotations", "texts"):
        text = text.replace(f'{key} = "', f'{key} = "{EXAMPLE.as_posix()}/')
    study.write_text(text + '\n[run]\nexecutor = "threads"\n', encoding="utf-8")
    assert load_toml(study).executor == "threads"
    assert main(["convert", str(study), "--out", str(tmp_path / "o"), "-q"]) == 2
    assert "--executor: unknown 'threads'" in capsys.readouterr().err
    assert main(["convert", str(study), "--out", str(tmp_path / "o"), "-q", "--executor", "local"]) == 0
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text(encoding="utf-8"))
    assert "executor" not in manifest["settings"] and manifest["run"]["executor"] == "local"
    study.write_text(text + '\n[run]\nexecutors = "local"\n', encoding="utf-8")
    assert main(["convert", str(study), "--out", str(tmp_path / "p"), "-q"]) == 2
    assert "unknown key(s) in [run]: executors" in capsys.readouterr().err


def test_without_dask_the_message_names_the_extra(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(RunError, match=r"pip install 'unitize\[dask\]'"):
        get_executor("dask")
    convert(override(load_toml(EXAMPLE / "study.toml"), out=tmp_path / "out"))
    assert main(["agree", str(tmp_path / "out"), "--executor", "dask:tcp://127.0.0.1:8786", "-q"]) == 2
    assert "pip install 'unitize[dask]'" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_clear_error(monkeypatch) -> None:
    if not HAS_DASK:
        pytest.skip(NO_DASK)
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", 1)
    with pytest.raises(RunError, match=r"no Dask scheduler answered at tcp://127\.0\.0\.1:9 within 1 s"):
        get_executor("dask:tcp://127.0.0.1:9")


def test_help_shows_the_flag_with_an_example(capsys) -> None:
    for command in ("convert", "agree"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = capsys.readouterr().out
        assert "--executor SPEC" in text and "--executor processes:2" in text and "dask[:ADDRESS]" in text


def test_the_dask_extra_is_declared_and_installed_by_make_test() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dask = ["dask[distributed]>=' in pyproject
    line = next(line for line in (ROOT / "Makefile").read_text().splitlines() if "'.[test," in line)
    assert "dask" in line.split("'.[", 1)[1].split("]'", 1)[0].split(",")


def test_nothing_imports_dask_unless_asked() -> None:
    import subprocess

    code = ("import sys, unitize, unitize.cli, unitize.agree, unitize.runtime.executors; "
            "unitize.runtime.executors.get_executor('processes:2').close(); "
            "print(sorted(m for m in ('dask', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_task_weights_count_a_groups_rows_in_every_part(tmp_path):
    """agree's tasks are balanced by rows per group; with several parts, every part's rows count."""
    from collections import Counter

    import pyarrow.parquet as pq

    from unitize.agree.tasks import group_rows
    from unitize.dataset.directory import OutputData

    out = tmp_path / "out"
    assert main(["convert", str(ROOT / "unitize" / "examples" / "tdb-mini" / "study.toml"), "--out", str(out),
                 "--units", "char", "--approaches", "interval", "--partition-units", "2000", "-q"]) == 0
    data = OutputData(out)
    setting = data.setting("char-interval")
    assert len(setting.parts) > 1
    names = data.groups(setting)
    counts = Counter(pq.read_table(out / "units" / "setting=char-interval", columns=["group"]).column("group").to_pylist())
    assert group_rows(data, setting, names) == [counts[n] for n in names]


def test_worker_processes_are_bounded_by_the_cores(monkeypatch, tmp_path):
    """--workers 32 or processes:32 on a 2-core machine starts 2 processes (issue 24 item 8)."""
    import unitize.adapters.datt as datt
    from tests.conftest import EXAMPLE
    from unitize.cli import main
    from unitize.config import load_toml, override
    from unitize.run import read_corpus
    from unitize.spans import run as span_run

    monkeypatch.setattr(executors, "cores", lambda: 2)
    monkeypatch.setattr(datt, "cores", lambda: 2)
    pool = get_executor("processes:32")
    assert (pool.name, pool.workers) == ("processes:32", 2)  # the run section records both
    started, shipped = [], []

    class Recording:
        def __init__(self, max_workers):
            started.append(max_workers)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def map(self, fn, *iterables, **kw):
            shipped.append(len(pickle.dumps(fn)))
            return map(fn, *iterables)

    monkeypatch.setattr(datt, "ProcessPoolExecutor", Recording)
    monkeypatch.setattr(datt, "PARALLEL_THRESHOLD", 1)
    # a whole read parses in processes of its own
    settings = override(load_toml(EXAMPLE / "study.toml"), input={"workers": 32})
    assert read_corpus(settings).spans and started == [2]
    # a streamed read (convert): a process per batch of connectives, as many as the cores at most
    monkeypatch.setattr(datt, "BATCH_FILES", 1)
    monkeypatch.setattr(span_run, "cores", lambda: 2)
    def forked(workers, initializer=None, initargs=()):
        started.append(workers)
        initializer(*initargs)  # what a forked process runs first: here, in this one
        return Recording(workers)

    monkeypatch.setattr(span_run, "forked_pool", forked)
    out = tmp_path / "out"
    assert main(["convert", str(EXAMPLE / "study.toml"), "--out", str(out), "--tokenizer", "regex", "--units", "char", "--workers", "32", "-q"]) == 0
    assert started == [2, 2, 2]  # forked_pool(2), whose Recording pool records 2 again
    assert shipped[-1] < 100  # a batch's task is a function by name: the run's context went once, with the process
