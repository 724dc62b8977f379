"""The self-check questions (lib/selfcheck.py, _ext/selfcheck.py and .js; issue 34): the
constructors refuse what a reader could not answer, grading agrees with the page's script,
the page's HTML hides the answer until a try, and the chapters' questions have computed
answers, unique ids and the count the issue asks for. In a browser: tests/site/test_selfcheck.py."""

import ast
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import numpy as np
import pytest
from bs4 import BeautifulSoup

from lib import selfcheck as sc

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CONSTRUCTORS = {"number_question", "shape_question", "choice_question",
                "wrong_output_question"}
PER_CHAPTER, IN_ALL = 5, 40     # the bar of issue 34


def number():
    return sc.number_question("sc-demo-number", "How much is $x$?", answer=0.25, tol=5e-3,
                              right="A quarter.", wrong={0.5: "A half.", 1.0: "The sum."},
                              hint="Count again.")


def shape():
    return sc.shape_question("sc-demo-shape", "Shape of $A$?", answer=(2, 4, 3),
                             right="N, L, S.", wrong={(2, 3, 4): "S and L swapped."})


def choice():
    return sc.choice_question("sc-demo-choice", "Which are rows?", options=["a", "b", "c"],
                              correct=[0, 2], right="Both.", wrong={1: "A column."})


def wrong_output():
    return sc.wrong_output_question("sc-demo-output", "Which is not a softmax?",
                                    outputs=["[0.5 0.5]", "[0.9 0.9]"], correct=1,
                                    right="It sums to 1.8.", wrong={0: "It sums to 1."})


KINDS = {"number": number, "shape": shape, "choice": choice, "wrong_output": wrong_output}
PREDICTED = "the output the reader predicts"


# ------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, message", [
    ({"answer": float("nan")}, "finite"),
    ({"answer": np.ones(3)}, "shape (3,)"),
    ({"answer": True}, "finite number"),
    ({"tol": 0}, "tol must be > 0"),
    ({"wrong": {0.252: "close"}}, "within tol"),
    ({"wrong": {0.5: "a", 0.503: "b"}}, "of each other"),
    ({"wrong": {0.5: ""}}, "explanation of wrong answer"),
    ({"right": ""}, "right must be"),
    ({"text": None}, "text must be"),
])
def test_number_question_refuses_what_a_reader_could_not_answer(kwargs, message):
    args = dict(text="How much?", answer=0.25, tol=5e-3, right="Yes.")
    args.update(kwargs)
    with pytest.raises(ValueError, match=re.escape(message)):
        sc.number_question("sc-demo-bad", **args)


@pytest.mark.parametrize("qid", ["demo", "sc-Demo-x", "sc-demo", "sc-demo_x", 3])
def test_the_id_reads_sc_chapter_slug(qid):
    with pytest.raises(ValueError, match="sc-<chapter slug>-<slug>"):
        sc.shape_question(qid, "Shape?", answer=(2, 3), right="Yes.")


@pytest.mark.parametrize("make, message", [
    (lambda: sc.shape_question("sc-demo-s", "?", answer=np.ones((2, 3)), right="r"), "not an array"),
    (lambda: sc.shape_question("sc-demo-s", "?", answer=(2, -1), right="r"), "non-negative"),
    (lambda: sc.shape_question("sc-demo-s", "?", answer=(2, 3), right="r",
                               wrong={(2, 3): "same"}), "equals the answer"),
    (lambda: sc.choice_question("sc-demo-c", "?", options=["a"], correct=0, right="r"),
     "at least two"),
    (lambda: sc.choice_question("sc-demo-c", "?", options=["a", "b"], correct=2, right="r"),
     "index from 0 to 1"),
    (lambda: sc.choice_question("sc-demo-c", "?", options=["a", "b"], correct=[0, 1],
                                right="r"), "every option is right"),
    (lambda: sc.choice_question("sc-demo-c", "?", options=["a", "b", "c"], correct=0,
                                right="r", wrong={1: "x"}), "options [2] are wrong but"),
    (lambda: sc.choice_question("sc-demo-c", "?", options=["a", "b"], correct=0,
                                right="r", wrong={0: "x", 1: "y"}), "is a right option"),
    (lambda: sc.wrong_output_question("sc-demo-o", "?", outputs=["1", ""], correct=0,
                                      right="r"), "non-empty strings"),
    (lambda: sc.wrong_output_question("sc-demo-o", "?", outputs=["1", "2"], correct=0,
                                      right="r"), "outputs [1] are wrong but"),
])
def test_other_kinds_refuse_malformed_questions(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_no_input_is_modified():
    wrong = {0.5: "A half."}
    options = ["a", "b"]
    sc.number_question("sc-demo-n", "?", answer=np.float64(0.25), tol=1e-3, right="r",
                       wrong=wrong)
    sc.choice_question("sc-demo-c", "?", options=options, correct=0, right="r",
                       wrong={1: "x"})
    assert wrong == {0.5: "A half."} and options == ["a", "b"]


# ------------------------------------------------------------------- grading
@pytest.mark.parametrize("text, value", [
    ("0.25", 0.25), (" .25 ", 0.25), ("2.5e-1", 0.25), ("1/4", 0.25), ("\u22120.5", -0.5),
    ("+3", 3.0), ("1 / 4", 0.25), ("0,25", None), ("1/0", None), ("x", None), ("", None),
    ("1/2/3", None)])
def test_parse_number(text, value):
    assert sc.parse_number(text) == value


@pytest.mark.parametrize("text, value", [
    ("(2, 4, 3)", (2, 4, 3)), ("2,4,3", (2, 4, 3)), ("2 x 4 x 3", (2, 4, 3)),
    ("2×4×3", (2, 4, 3)), ("[2, 4, 3]", (2, 4, 3)), ("(5,)", (5,)), ("2 4 3", (2, 4, 3)),
    ("2X4", (2, 4)), ("()", None), ("2, a", None), ("2.5, 3", None), ("-2, 3", None)])
def test_parse_shape(text, value):
    assert sc.parse_shape(text) == value


def test_each_listed_wrong_answer_gets_its_own_explanation():
    q = number()
    assert q.check("0.251") == ("correct", "A quarter.")
    assert q.check("0.5") == ("wrong", "A half.") and q.check("1.004") == ("wrong", "The sum.")
    assert q.check("7") == ("wrong", "Count again.")
    assert q.check("a quarter")[0] == "unreadable"
    s = shape()
    assert s.check("2 x 4 x 3")[0] == "correct" and s.check("(2, 3, 4)")[1] == "S and L swapped."
    c = choice()
    assert c.check([2, 0])[0] == "correct" and c.check([0, 1])[1] == "A column."
    assert wrong_output().check(0) == ("wrong", "It sums to 1.")


@pytest.fixture(scope="module")
def script_parsers():
    """The page's parsers (_ext/selfcheck.js), run in Node on a list of inputs."""
    if not shutil.which("node"):
        pytest.skip("node is not installed")

    def run(fn, inputs):
        code = ("globalThis.window = globalThis; globalThis.document = {readyState: 'complete',"
                " querySelectorAll: () => []};\n"
                + (ROOT / "_ext" / "selfcheck.js").read_text()
                + f"\nconsole.log(JSON.stringify({json.dumps(inputs)}.map("
                f"(t) => window.courseSelfcheck.{fn}(t))));")
        out = subprocess.run(["node", "-e", code], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)
    return run


def test_the_page_reads_numbers_and_shapes_as_python_does(script_parsers):
    numbers = ["0.25", " .25 ", "2.5e-1", "1/4", "\u22120.5", "+3", "1 / 4", "0,25", "1/0",
               "x", "", "1/2/3", "1e400", "00.5"]
    shapes = ["(2, 4, 3)", "2,4,3", "2 x 4 x 3", "2×4×3", "[2, 4, 3]", "(5,)", "2 4 3",
              "2X4", "()", "2, a", "2.5, 3", "-2, 3", " ( 2 , 3 ) "]
    py_numbers = [sc.parse_number(t) for t in numbers]
    js_numbers = script_parsers("parseNumber", numbers)
    # JSON has no infinity: Node writes null for it
    assert js_numbers == [None if x is not None and not np.isfinite(x) else x
                          for x in py_numbers]
    assert script_parsers("parseShape", shapes) == [
        list(s) if s is not None else None for s in map(sc.parse_shape, shapes)]


# ------------------------------------------------------------------- forms
@pytest.mark.parametrize("kind", KINDS)
def test_jupyter_sees_text_markdown_and_data_never_html(kind, monkeypatch):
    monkeypatch.delenv(sc.SITE_BUILD_ENV, raising=False)
    from IPython.core.formatters import DisplayFormatter

    data, _ = DisplayFormatter().format(KINDS[kind]())
    assert set(data) == {"text/plain", "text/markdown", sc.MIME}
    assert data["text/plain"].startswith("Self-check question sc-demo-")
    # no answer in the Markdown: the learner answers in the cell below (check), which
    # this display made able to grade the question in this kernel
    markdown = data["text/markdown"]
    assert "The answer:" not in markdown and "<details>" not in markdown
    assert f'check("{data[sc.MIME]["id"]}", reveal=True)' in markdown
    assert sc.QUESTIONS[data[sc.MIME]["id"]] == data[sc.MIME]
    assert json.loads(json.dumps(data[sc.MIME])) == data[sc.MIME]
    monkeypatch.setenv(sc.SITE_BUILD_ENV, "1")
    data, _ = DisplayFormatter().format(KINDS[kind]())
    assert data["text/markdown"].startswith("````{selfcheck} sc-demo-")


def test_stored_numbers_do_not_change_with_the_last_bits_a_cpu_computes():
    a = sc.number_question("sc-demo-n", "?", answer=0.1 + 0.2, tol=1e-3, right="r").data()
    b = sc.number_question("sc-demo-n", "?", answer=0.3, tol=1e-3, right="r").data()
    assert a == b


# ------------------------------------------------------------- the page's HTML
@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A one-page Sphinx build (MyST, _ext/selfcheck.py) of the four kinds' directives."""
    src = tmp_path_factory.mktemp("selfcheck-page")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_parser', 'sphinx_copybutton', 'selfcheck']\n"
        "myst_enable_extensions = ['dollarmath', 'colon_fence']\n")
    # the last question in a cell as myst-nb writes it, followed by a cell tagged predict
    directives = [make().directive() for make in KINDS.values()]
    directives[-1] = (f"::::{{container}} cell tag_remove-input\n:::{{container}} cell_output\n"
                      f"{directives[-1]}:::\n::::\n\n"
                      "::::{container} cell tag_predict\n:::{container} cell_input\n"
                      "```python\nprint(PREDICTED)\n```\n:::\n:::{container} cell_output\n"
                      f"```none\n{PREDICTED}\n```\n:::\n::::\n")
    (src / "index.md").write_text("# Questions\n\n" + "\n".join(directives))
    out = src / "_out"
    subprocess.run(["sphinx-build", "-W", "-n", "-q", "-b", "html", str(src), str(out)],
                   check=True, env={**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}:"
                                    + os.environ["PATH"]})
    # docutils' container directive writes its classes as ids (cell-output, tag-predict);
    # myst-nb's cells keep theirs (cell_output, tag_predict), as the chapters' pages have them
    index = out / "index.html"
    text = index.read_text()
    for name in ("cell-input", "cell-output", "tag-predict", "tag-remove-input"):
        text = text.replace(f"{name} docutils", name.replace("-", "_", 1) + " docutils")
    index.write_text(text)
    return BeautifulSoup(text, "html.parser"), out


def visible_text(box) -> str:
    box = BeautifulSoup(str(box), "html.parser")
    for hidden in box.select("[hidden], script"):
        hidden.decompose()
    return box.get_text(" ")


def test_every_kind_is_a_labelled_form_with_a_live_region(page):
    soup, _ = page
    boxes = soup.select("div.selfcheck")
    assert [b["data-kind"] for b in boxes] == list(KINDS)
    for box in boxes:
        assert box["role"] == "group" and soup.find(id=box["aria-labelledby"])
        verdict = box.select_one(".selfcheck-verdict")
        assert verdict["role"] == "status" and verdict["aria-live"] == "polite"
        for control in box.select("input"):
            label = box.select_one(f'label[for="{control["id"]}"]')
            assert label and label.get_text(strip=True), control
        assert box.select_one("button.selfcheck-check[type=submit]")
    radios = boxes[3].select("input[type=radio]")
    assert len(radios) == 2 and len(boxes[2].select("input[type=checkbox]")) == 3
    assert boxes[2].select_one("fieldset legend").get_text() == "Choose every right option"


def test_the_answer_is_not_visible_before_a_try(page):
    soup, _ = page
    for box, make in zip(soup.select("div.selfcheck"), KINDS.values(), strict=True):
        q = make()
        text = " ".join(visible_text(box).split())
        assert q.right not in text, box["id"]
        assert all(why not in text for _, why in q.wrong), box["id"]
        keys = [f.get("data-key") for f in box.select(".selfcheck-feedback")]
        assert keys == ["right"] + [f"w{i}" for i in range(len(q.wrong))] + (
            ["hint"] if q.hint else [])
        assert box.select_one(".selfcheck-answer").has_attr("hidden")
        # what a reader answered, named for the PDF's answers (scripts/print_pdf.py)
        labels = [f["data-label"] for f in box.select(".selfcheck-feedback[data-label]")]
        assert labels == [q.key_text(k).strip("`") for k, _ in q.wrong]
        data = json.loads(box.select_one("script.selfcheck-data").string)
        assert data["kind"] == q.kind and "right" not in data   # explanations stay in the HTML


def test_the_script_and_stylesheet_come_from_the_site(page):
    soup, out = page
    srcs = [s["src"] for s in soup.select("script[src]") if "selfcheck" in s["src"]]
    assert srcs == ["_static/selfcheck/selfcheck.js"]
    assert (out / "_static" / "selfcheck" / "selfcheck.js").exists()
    css = [s["href"] for s in soup.select("link[href]") if "selfcheck" in s["href"]]
    assert css == ["_static/selfcheck/selfcheck.css"]   # (the whole site: tests/site/)


# ------------------------------------------- the page in Chromium (issue 47, items 1, 3, 5)
@pytest.fixture(scope="module")
def chromium():
    import shutil
    executable = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
    if not Path(executable).exists():
        pytest.skip("chromium is not installed here")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, headless=True)
        yield browser
        browser.close()


READ_PAGE = """() => ({
  folded: document.querySelector('.tag_predict > .cell_output').hidden,
  skip: !!document.querySelector('.selfcheck-fold button'),
  progress: document.querySelector('.selfcheck-progress-count')?.textContent,
  reset: !document.querySelector('.selfcheck-progress button').hidden,
})"""


def test_copy_buttons_never_submit_and_add_no_tab_stop(page, chromium):
    # sphinx-copybutton puts a <button> (no type: a submit button) on each code block; an
    # output shown as an option is a bare <pre>, so no form holds one (the page's own code
    # block, the predict cell's, keeps its button)
    soup, out = page
    assert soup.select(".tag_predict .highlight pre") and not soup.select("form .highlight")
    tab = chromium.new_page()
    tab.goto((out / "index.html").as_uri())
    tab.wait_for_selector(".tag_predict button.copybtn", state="attached")
    stops = tab.evaluate("""() => [...document.querySelectorAll('form.selfcheck-form')].map(f =>
        [...f.querySelectorAll('button, input, a[href], [tabindex]')]
          .filter(e => e.tabIndex >= 0 && !e.hidden).map(e => e.className || e.type))""")
    for form in stops:
        assert form[-1] == "selfcheck-check" and "copybtn" not in " ".join(form), form
    tab.close()


def test_predict_output_folds_until_answered_and_progress_is_kept(page, chromium):
    _, out = page
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    tab = context.new_page()
    tab.goto((out / "index.html").as_uri())
    tab.wait_for_selector(".selfcheck-progress")
    seen = tab.evaluate(READ_PAGE)
    assert seen == {"folded": True, "skip": True, "reset": False,
                    "progress": "Self-checks on this page: answered 0 of 4."}
    output = tab.locator("#sc-demo-output")
    output.locator("#sc-demo-output-option-0").check()       # a wrong try: still folded
    output.locator("button.selfcheck-check").press("Enter")
    assert tab.evaluate(READ_PAGE)["folded"]
    output.locator("#sc-demo-output-option-1").check()       # right: the output shows
    output.locator("#sc-demo-output-option-1").press("Enter")
    seen = tab.evaluate(READ_PAGE)
    assert not seen["folded"] and not seen["skip"] and seen["reset"]
    assert seen["progress"] == "Self-checks on this page: answered 1 of 4."
    number = tab.locator("#sc-demo-number")                   # the answer shown: answered
    number.locator("input").fill("7")
    number.locator("input").press("Enter")
    number.locator("button.selfcheck-reveal").click()
    assert tab.evaluate(READ_PAGE)["progress"].endswith("answered 2 of 4.")
    width = tab.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at 390 px: {width} px"
    # an output as long as chapter 1's (issue 43) wraps inside its option, cut nowhere
    overflow = tab.evaluate("""() => {
        const pre = document.querySelector('#sc-demo-output pre.selfcheck-pre');
        pre.textContent = 'a[0]*V[0]+a[1]*V[1]+a[2]*V[2] -> [0.61237244 0.35355339 1.22474487]';
        const option = pre.closest('.selfcheck-option');
        return [pre.scrollWidth - pre.clientWidth, option.scrollWidth - option.clientWidth,
                document.documentElement.scrollWidth - 390]; }""")
    assert max(overflow) <= 0, overflow

    tab.reload()                                              # coming back: remembered
    tab.wait_for_selector(".selfcheck-progress")
    seen = tab.evaluate(READ_PAGE)
    assert not seen["folded"] and seen["progress"].endswith("answered 2 of 4.")
    assert "Answered right earlier." in output.locator(".selfcheck-verdict").inner_text()
    assert number.locator(".selfcheck-answer").is_visible()

    tab.locator(".selfcheck-progress button").click()         # reset: all blank, folded
    seen = tab.evaluate(READ_PAGE)
    assert seen["folded"] and seen["skip"] and seen["progress"].endswith("answered 0 of 4.")
    assert not number.locator(".selfcheck-answer").is_visible()
    tab.locator(".selfcheck-fold button").focus()             # skipped: shown, not answered
    tab.keyboard.press("Enter")
    seen = tab.evaluate(READ_PAGE)
    assert not seen["folded"] and seen["progress"].endswith("answered 0 of 4.")
    tab.reload()
    tab.wait_for_selector(".selfcheck-progress")
    assert not tab.evaluate(READ_PAGE)["folded"]
    context.close()

    still = chromium.new_context(java_script_enabled=False)   # without JavaScript: readable
    tab = still.new_page()
    tab.goto((out / "index.html").as_uri())
    assert tab.locator(".tag_predict .cell_output").inner_text().strip() == PREDICTED
    still.close()


# --------------------------------------------------------- the chapters' questions
def question_cells(reference: Path):
    nb = nbformat.read(reference, as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if sc.MIME in output.get("data", {}):
                yield cell, output["data"][sc.MIME]


ALL = [(ref.stem, cell, data) for ref in REFERENCES for cell, data in question_cells(ref)]


def test_ids_are_unique_and_name_their_chapter():
    ids = [data["id"] for _, _, data in ALL]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for name, _, data in ALL:
        # the chapter's slug is its labels' (the page's first label, "(nb-masking)=")
        slug = re.search(r"^\(nb-([a-z0-9-]+)\)=", (ROOT / "notebooks" / f"{name}.md")
                         .read_text(), re.M)[1]
        assert data["id"].startswith(f"sc-{slug}-"), f"{data['id']} is not sc-{slug}-..."


def literal(node) -> bool:
    """A number, a tuple of numbers or a string typed into the source."""
    if isinstance(node, ast.UnaryOp):
        return literal(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(literal(e) for e in node.elts)
    return isinstance(node, ast.Constant) and not isinstance(node.value, type(None))


@pytest.mark.parametrize("name, cell, data", ALL, ids=[d["id"] for _, _, d in ALL])
def test_every_expected_answer_is_computed_not_typed(name, cell, data):
    # the cell is hidden but for its output, and its last expression asks the question;
    # the expected answer and the classic wrong ones come from variables the notebook
    # computed (nbval re-executes the cell and compares the data, answers included)
    assert "remove-input" in cell.metadata.get("tags", []), data["id"]
    tree = ast.parse(cell.source)
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    call = last.value
    assert getattr(call.func, "id", None) in CONSTRUCTORS
    args = {k.arg: k.value for k in call.keywords}
    if data["kind"] in ("number", "shape"):
        assert not literal(args["answer"]), f"{data['id']}: the answer is typed"
        wrong = args.get("wrong")
        if isinstance(wrong, ast.Dict):
            typed = [ast.unparse(k) for k in wrong.keys if literal(k)]
            assert not typed, f"{data['id']}: wrong answers typed: {typed}"
    if data["kind"] == "wrong_output":
        outputs = args["outputs"]
        assert not (isinstance(outputs, ast.List) and any(literal(e) for e in outputs.elts)), \
            f"{data['id']}: outputs typed, not printed from computed arrays"


@pytest.mark.parametrize("reference", REFERENCES, ids=lambda p: p.stem)
def test_each_chapter_asks_at_least_five_questions(reference):
    found = len(list(question_cells(reference)))
    assert found >= PER_CHAPTER, f"{reference.stem}: {found} self-check questions"


@pytest.mark.parametrize("name, data", [(n, d) for n, _, d in ALL],
                         ids=[d["id"] for _, _, d in ALL])
def test_every_question_explains_two_wrong_answers_and_hints_the_rest(name, data):
    # issue 47, item 2: the classic wrong answers (the other axis, the transpose, the mean
    # for the minimum, the mask or the scale forgotten, ...) each get their own explanation
    # (for options, each wrong option's counts), at least two; any other answer, a hint
    # about the method, never only "try again"
    explained = [w for w in data["wrong"] if w["why"].strip()]
    assert len(explained) >= 2, (
        f"{name} {data['id']}: {len(explained)} explained wrong answer(s), at least 2 wanted")
    # a one-answer choice whose every wrong option is explained has no "other answer"; a
    # number, a shape, or a choose-all question (a partial choice) needs the hint
    options = data.get("options") or []
    covered = (data["kind"] in ("choice", "wrong_output") and len(data["correct"]) == 1
               and {w["key"] for w in explained} == set(range(len(options))) - set(data["correct"]))
    assert covered or (data.get("hint") or "").strip(), \
        f"{name} {data['id']}: no hint for other answers"


def test_at_least_forty_questions_in_all():
    assert len(ALL) >= IN_ALL


def test_the_jupyterlab_check_sees_the_questions_and_no_answer():
    # scripts/launch_check.py reads what JupyterLab renders: each question's Markdown
    # cell, and what shows without a click
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import launch_check

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(number().markdown())])
    asked = {"markdown": ["Check yourself. How much is x? Answer in the cell below"],
             "shown": ["Check yourself. How much is x? Answer in the cell below"]}
    assert launch_check.selfcheck_problems(asked, nb) == []
    opened = dict(asked, shown=[asked["shown"][0] + " The answer: 0.250"])
    assert launch_check.selfcheck_problems(opened, nb) == [
        "1 self-check answers visible without a click"]
    missing = {"markdown": ["Some text"], "shown": ["Some text"]}
    assert launch_check.selfcheck_problems(missing, nb) == [
        "1 self-check questions but 0 rendered"]


def test_strip_timings_writes_a_stored_question_as_a_kernel_displays_it_now(monkeypatch):
    # `python scripts/strip_timings.py notebooks/*.ipynb` brings the references' stored
    # question Markdown up to date with lib.selfcheck without re-executing the chapters
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    import strip_timings
    from IPython.core.formatters import DisplayFormatter

    monkeypatch.delenv(sc.SITE_BUILD_ENV, raising=False)
    for make in KINDS.values():
        shown, _ = DisplayFormatter().format(make())
        stored = {"output_type": "execute_result", "data": dict(shown, **{"text/markdown": "old"})}
        strip_timings.refresh_questions([stored])
        assert stored["data"] == shown
