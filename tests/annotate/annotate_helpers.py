"""Shared pieces of the annotation tests: item files, judge ratings in a store, the server in a subprocess."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from conftest import one_line_error  # noqa: F401  (re-exported for the annotate tests)
from servers import ServerProcess

SRC = Path(__file__).resolve().parents[2] / "src"


def env() -> dict[str, str]:
    """The environment of a ``judgelab`` subprocess: this checkout's sources first."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]), COLUMNS="200")


def judgelab(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True, env=env(),
                          timeout=timeout, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_items(path: Path, per_system: int = 6, systems=("alpha-sys", "beta-sys"), extra: list[dict] | None = None) -> Path:
    """Items of two systems (distinctive names, to check the form never shows them); ``extra`` rows appended."""
    rows = []
    for s, system in enumerate(systems):
        for k in range(per_system):
            rows.append({"id": f"it{k:02d}", "system": system, "group": f"g{k}",
                         "text": f"Paragraph {k} of writer {s}. It has {k + 2} plain sentences about topic {k}."})
    rows.extend(extra or [])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def put_judge(store_path: Path, items: list[dict], score_of, samples: int = 2, rater: str = "judge@plain-quality",
              criteria=("fluency", "coherence")) -> None:
    """Judge rows in a store (as `judgelab rate` writes them), ``score_of(row, criterion, sample)``."""
    from judgelab.store import Judgment, Store

    rows = []
    for item in items:
        for criterion in criteria:
            for sample in range(samples):
                score = score_of(item, criterion, sample)
                rows.append(Judgment(item_id=item["id"], system=item["system"], group=item.get("group"), criterion=criterion,
                                     rater=rater, sample=sample, score=score, score_parsed=score, score_logprob=None,
                                     logprob_outside=None, status="ok", raw=str(score)))
    with Store(store_path) as store:
        store.put(judgments=rows)


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class Server(ServerProcess):
    """`judgelab annotate …` in a subprocess (started and watched by :class:`servers.ServerProcess`);
    ready when it has printed its links, which it parses into ``links``. Its stdout and stderr are
    kept beside the ``--out`` folder."""

    def __init__(self, *args: str) -> None:
        self.args = args
        log_dir = Path(args[args.index("--out") + 1]).parent
        super().__init__([sys.executable, "-m", "judgelab.cli", "annotate", *args], log_dir,
                         ready_line=r"^Ratings are saved", env=env(), name="judgelab annotate")
        self.links: dict[str, str] = {}
        for line in self.stdout().splitlines():
            if line.startswith("  ") and ": http" in line:
                label, url = line.strip().split(": ", 1)
                self.links[label] = url


CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def chromium(profile: Path, width: int, height: int):
    """Headless Debian Chromium through Selenium, a fresh profile, the window ``width`` × ``height``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(20)
    return driver
