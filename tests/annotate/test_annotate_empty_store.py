"""The annotation app on a folder where nobody has rated anything yet: no judge ratings, no human ratings.
Every page answers (HTTP 200) and the overview says in words that there is nothing to show yet."""
from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx", reason="starlette's TestClient needs httpx (in judgelab[test])")
from starlette.testclient import TestClient  # noqa: E402

from annotate_helpers import write_items  # noqa: E402
from judgelab.annotate.app import create_app  # noqa: E402
from judgelab.annotate.setup import prepare  # noqa: E402


def test_the_overview_of_an_empty_store_says_nothing_is_rated_yet(tmp_path):
    items = write_items(tmp_path / "items.jsonl", per_system=3)
    session = prepare(items, "plain-quality", tmp_path / "out", annotators=["me"])
    try:
        client = TestClient(create_app(session), base_url="http://127.0.0.1:8765")
        page = client.get("/overview")
        assert page.status_code == 200, page.text[:500]
        assert "No ratings yet" in page.text
        assert "0 human ratings of 6 items" in page.text
        assert client.get("/a/me").status_code == 200
    finally:
        session.store.close()
