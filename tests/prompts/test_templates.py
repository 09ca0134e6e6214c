"""The paper's prompts render verbatim; variants and bad template input."""
import pytest

from judgelab.errors import JudgelabError
from judgelab.prompts import available_templates, load_template

ITEM = {"item_id": "1", "text": "The cat sat.", "context": "A cat"}

GRAMMAR = """Please rate the story fragment
The goal of this task is to rate story fragment.
Note: Please take the time to fully read and understand the story fragment. We will reject submissions from workers that are clearly spamming the task.
Story fragment:
The cat sat.
(End of story fragment)
How grammatically correct is the text of the story fragment? (on a scale of 1-5, with 1 being the lowest)"""

RELEVANCE_TAIL = """(End of story fragment)
Now read the PROMPT based on which the story fragment was written.
PROMPT: A cat
(End of PROMPT)
How relevant is the story fragment to the prompt? (on a scale of 1-5, with 1 being the lowest)"""

MEANING = """You are given two news titles. Please read the news titles and answer the question.
News title 1:
Stocks rise
(End of news title 1)
News title 2:
Stocks rose
(End of news title 2)
Question: Do you agree that the meaning (or semantics) of news title 1 is preserved in news title 2? (on a scale of 1-5, with 1 being the strongly disagree and 5 being strongly agree.)"""


def test_story_prompts_verbatim():
    t = load_template("chiang-lee-story")
    assert list(t.criteria) == ["grammaticality", "cohesiveness", "likability", "relevance"]
    assert t.render("grammaticality", ITEM) == GRAMMAR
    assert t.render("relevance", ITEM).endswith(RELEVANCE_TAIL)
    assert "How enjoyable do you find the story fragment? (on a scale of 1-5, with 1 being the lowest)" in t.render("likability", ITEM)


def test_variants_prepend_and_append():
    t = load_template("chiang-lee-story")
    assert t.render("grammaticality", ITEM, "persona") == "(You are a human worker hired to rate the story fragment.)\n" + GRAMMAR
    assert t.render("grammaticality", ITEM, "explain") == GRAMMAR + "\nPlease also explain your decision."


def test_adversarial_prompts():
    t = load_template("chiang-lee-adversarial")
    assert t.render("meaning", {"text": "Stocks rose", "context": "Stocks rise"}) == MEANING
    fluency = t.render("fluency", {"text": "Stocks rise"})
    assert fluency.startswith("You are given a news title. Please read the news title and answer the question.\nNews title:\nStocks rise\n(End of news title)")
    assert fluency.endswith("Question: How natural and fluent is the text of the news title? (on a scale of 1-5, with 1 being the lowest)")


def test_missing_context_and_unknown_names():
    t = load_template("chiang-lee-story")
    with pytest.raises(JudgelabError, match="needs the field 'context'"):
        t.render("relevance", {"item_id": "x", "text": "t", "context": None})
    with pytest.raises(JudgelabError, match="unknown criterion 'beauty'"):
        t.check(["beauty"], None)
    with pytest.raises(JudgelabError, match="unknown instruction variant"):
        t.check(["likability"], "pirate")
    with pytest.raises(JudgelabError, match="unknown template"):
        load_template("no-such-template")


def test_user_template_from_path(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nscale: [1, 7]\ninstruction: 'Text: {{ text }}'\ncriteria:\n  clarity:\n    question: How clear? (1-7)\n")
    t = load_template(str(path))
    assert t.render("clarity", {"text": "hi"}) == "Text: hi\nHow clear? (1-7)"
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncriteria: {}\n")
    with pytest.raises(JudgelabError, match="invalid template"):
        load_template(str(bad))


def test_shipped_templates_load():
    for name in available_templates():
        assert load_template(name).criteria


def test_rendering_reads_the_template_file_only_to_name_a_failure(tmp_path, monkeypatch):
    """Each render parsed the template's YAML again to find line numbers for an error that did not happen
    (12 ms of a 12 ms render for geval-summeval; the annotation form renders each criterion twice)."""
    import judgelab.prompts as prompts

    path = tmp_path / "mine.yaml"
    path.write_text("name: m\ninstruction: |-\n  Rate\n  {{ text }}\ncriteria:\n  q:\n    question: Good for {{ audience }}?\n")
    template = prompts.load_template(str(path))
    calls = []
    real = prompts.yaml_line
    monkeypatch.setattr(prompts, "yaml_line", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert template.render("q", {**ITEM, "audience": "kids"}) == "Rate\nThe cat sat.\nGood for kids?"
    assert load_template("geval-summeval").render("coherence", ITEM).count("The cat sat.") == 1
    assert calls == []
    with pytest.raises(JudgelabError, match=r"mine\.yaml: criteria\.q\.question \(line 7\): template field missing"):
        template.render("q", ITEM)  # a failure still names the file and the line
    assert len(calls) == 1
