"""Self-check questions: the reader answers, the page answers back (issue 34).

A chapter asks a question in a code cell tagged ``remove-input`` at the end of a core
section; the cell's last expression is one of the four constructors below, and every
expected value in it is computed by earlier cells from the kernel, never typed:

* :func:`number_question`: a number, right within a stated absolute tolerance;
* :func:`shape_question`: an array's shape, typed as ``(2, 4, 3)``, ``2,4,3`` or
  ``2 x 4 x 3``;
* :func:`choice_question`: options of which one or several are right;
* :func:`wrong_output_question`: printed outputs of which one is wrong.

Each classic wrong answer (``wrong``) has its own explanation and the right answer says
why it is right (``right``); ``hint`` answers any other wrong answer. Texts are Markdown
(MyST on the site), with ``$...$`` math.

Each constructor returns a :class:`Question`, which displays itself in three forms
(:meth:`Question._repr_mimebundle_`): one fixed line of ``text/plain`` (what nbval
compares with the question's data), ``text/markdown`` for Jupyter and Colab (the question
and how to answer it, without the answer: :func:`check` answers back in the kernel), and
``application/vnd.course.selfcheck+json``, the question's data, which
``scripts/jupyter_notebooks.py``, ``scripts/print_pdf.py`` and the tests read from the
executed notebooks. While the site is built (``COURSE_SITE_BUILD``, set by the Sphinx
extensions), the Markdown is instead a ``{selfcheck}`` directive holding the data, which
``_ext/selfcheck.py`` turns into the question on the page (its math typeset by KaTeX at
build time) and ``_ext/selfcheck.js`` answers back, in the browser, with no server.

:meth:`Question.check` grades an answer as the page does (the tests compare the two).
In a Jupyter notebook, :func:`check` (``check("sc-...", answer)``) grades it and prints the
page's feedback, for the questions displayed in the kernel or given to :func:`register`
(the learners' notebooks do so in a collapsed cell before their first question).
"""

import base64
import itertools
import json
import math
import numbers
import os
import re
import zlib

__all__ = ["Question", "number_question", "shape_question", "choice_question",
           "wrong_output_question", "markdown_from_data", "parse_number", "parse_shape",
           "MIME", "SITE_BUILD_ENV", "check", "register", "encode_questions"]

MIME = "application/vnd.course.selfcheck+json"
SITE_BUILD_ENV = "COURSE_SITE_BUILD"      # as lib.explorers: set by the site's extensions
ID = re.compile(r"^sc-[a-z0-9]+(?:-[a-z0-9]+)+$")
KINDS = ("number", "shape", "choice", "wrong_output")


def _fail(qid, message):
    prefix = f"self-check question {qid!r}: " if isinstance(qid, str) else "self-check question: "
    raise ValueError(prefix + message)


def _text(qid, name, value, required=True):
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        _fail(qid, f"{name} must be a non-empty string of Markdown, got {value!r}")
    return value.strip()


def _real(qid, name, value):
    """A finite Python float from a number or a one-element array (not a bool)."""
    if isinstance(value, bool) or value is None:
        _fail(qid, f"{name} must be a finite number, got {value!r}")
    if hasattr(value, "shape") and hasattr(value, "item"):
        if getattr(value, "size", 1) != 1:
            _fail(qid, f"{name} must be one number, got an array of shape "
                       f"{tuple(value.shape)}")
        value = value.item()
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        _fail(qid, f"{name} must be a finite number, got {value!r} "
                   f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        _fail(qid, f"{name} must be finite, got {value!r}")
    return value


def _shape(qid, name, value):
    if hasattr(value, "shape") and not isinstance(value, tuple):
        _fail(qid, f"{name} must be a shape (a tuple of ints such as array.shape), "
                   "not an array")
    if not isinstance(value, (tuple, list)) or not value:
        _fail(qid, f"{name} must be a non-empty tuple of non-negative ints, got {value!r}")
    dims = []
    for dim in value:
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or int(dim) < 0:
            _fail(qid, f"{name} must hold non-negative ints, got {value!r}")
        dims.append(int(dim))
    return tuple(dims)


def _wrong_explanations(qid, wrong):
    if wrong is None:
        return {}
    if not isinstance(wrong, dict):
        _fail(qid, f"wrong must be a dict {{wrong answer: explanation}}, got "
                   f"{type(wrong).__name__}")
    for key, why in wrong.items():
        _text(qid, f"the explanation of wrong answer {key!r}", why)
    return wrong


def _decimals(tol):
    """Decimals that show a number to well within its tolerance."""
    return max(0, math.ceil(-math.log10(tol)))


def _round(x, tol):
    """x rounded far below its tolerance, so the data a notebook stores do not change
    with the last bits a CPU computes (nbval compares them)."""
    return round(x, _decimals(tol) + 3) + 0.0


def format_number(x, tol):
    """x with the decimals its tolerance calls for (``0.123`` for ``tol=5e-3``)."""
    return f"{x:.{_decimals(tol)}f}"


def format_shape(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$", re.IGNORECASE)


def parse_number(text):
    """A number typed by a reader: ``0.25``, ``.25``, ``2.5e-1``, ``-1``, ``1/4``.

    The Unicode minus and spaces are accepted; a comma is not (it is no decimal point
    here). Returns a float, or None when the text is not a number. The site's script
    (``_ext/selfcheck.js``) reads the same forms.

    >>> parse_number(" 1/4 "), parse_number("2.5e-1"), parse_number("\u22120.5"), parse_number("x")
    (0.25, 0.25, -0.5, None)
    """
    text = str(text).strip().replace("\u2212", "-").replace(" ", "")
    parts = text.split("/")
    if len(parts) > 2 or not all(NUMBER.match(p) for p in parts):
        return None
    values = [float(p) for p in parts]
    if len(values) == 2:
        if values[1] == 0:
            return None
        return values[0] / values[1]
    return values[0]


SHAPE_SPLIT = re.compile(r"\s*(?:,|x|\u00d7|\*|\s)\s*", re.IGNORECASE)


def parse_shape(text):
    """A shape typed by a reader: ``(2, 4, 3)``, ``2,4,3``, ``2 x 4 x 3``, ``2×4×3``,
    ``[2, 4, 3]`` or ``(5,)``. Returns a tuple of ints, or None when the text is not one.

    >>> parse_shape("(2, 4, 3)"), parse_shape("2 x 4 x 3"), parse_shape("5,"), parse_shape("2, a")
    ((2, 4, 3), (2, 4, 3), (5,), None)
    """
    text = str(text).strip()
    if text[:1] in "([" and text[-1:] in ")]":
        text = text[1:-1].strip()
    text = text.rstrip(",").strip()
    if not text:
        return None
    parts = SHAPE_SPLIT.split(text)
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


ANSWER_FORMS = {
    "number": "a number, such as `0.25` or `\"1/4\"`",
    "shape": "a shape, such as `(2, 4, 3)`",
    "choice": "the option's letter, such as `\"B\"`",
    "choices": "the letters of every right option, such as `\"A, C\"`",
    "wrong_output": "the number of the wrong output, such as `2`",
}


def answer_form(data):
    """How a Jupyter learner writes an answer to the question ``data`` for :func:`check`."""
    kind = data["kind"]
    if kind == "choice" and len(data.get("correct", [])) > 1:
        kind = "choices"
    return ANSWER_FORMS[kind]


def check_call(data, answer="..."):
    """The one line a Jupyter learner edits and runs to answer ``data``'s question."""
    return f'check("{data["id"]}", {answer})'


def markdown_from_data(data, text=lambda markdown: markdown):
    """A question's Markdown for Jupyter and Colab, from its data (:meth:`Question.data`):
    its text and options, and how to answer it in the code cell that follows
    (:func:`check_call`): the answer and the explanations are not in it, so that the
    learner tries first; :func:`check` gives them. ``text`` converts each Markdown text
    (the notebooks' converter turns MyST roles into plain Markdown with it)."""
    kind = data["kind"]
    parts = [f"**Check yourself.** {text(data['text'])}"]
    if kind == "choice":
        parts.append("\n".join(f"- **{chr(ord('A') + i)}.** {text(o)}"
                               for i, o in enumerate(data["options"])))
    elif kind == "wrong_output":
        for i, o in enumerate(data["options"]):
            parts.append(f"Output {i + 1}:\n\n```text\n{o}\n```")
    extra = ""
    if kind == "number":
        extra = f" (within \u00b1{data.get('tol', 0):g} counts as right)"
    elif kind == "choice" and len(data.get("correct", [])) > 1:
        extra = " (several options are right)"
    parts.append(f"*Answer in the cell below: put {answer_form(data)}{extra} in place of "
                 f"`...` and run the cell. It answers back; "
                 f"`{check_call(data, 'reveal=True')}` shows the answer.*")
    return "\n\n".join(parts) + "\n"


class Question:
    """A self-check question; made by :func:`number_question`, :func:`shape_question`,
    :func:`choice_question` or :func:`wrong_output_question`, which validate it.

    Attributes
    ----------
    id, kind, text, right, hint : str (hint may be None)
    wrong : list of (key, str)
        Each classic wrong answer (a float, a shape tuple or an option's index) with
        its explanation.
    answer : float or tuple of int, for ``number`` and ``shape``
    tol : float, for ``number``
    options : list of str, for ``choice`` and ``wrong_output`` (the outputs)
    correct : list of int, for ``choice`` and ``wrong_output`` (the wrong output's index)
    """

    def __init__(self, kind, qid, text, right, wrong, hint, **fields):
        self.kind = kind
        self.id = qid
        self.text = text
        self.right = right
        self.wrong = wrong
        self.hint = hint
        self.answer = fields.get("answer")
        self.tol = fields.get("tol")
        self.options = fields.get("options")
        self.correct = fields.get("correct")

    # ---- what the reader sees --------------------------------------------------------
    def answer_text(self):
        """The right answer in words (Markdown), as "show the answer" gives it."""
        if self.kind == "number":
            return f"{format_number(self.answer, self.tol)} (within \u00b1{self.tol:g})"
        if self.kind == "shape":
            return f"`{format_shape(self.answer)}`"
        letters = ", ".join(self.label(i) for i in self.correct)
        return letters

    def label(self, index):
        """An option's name: "A", "B", ... (outputs: "output 1", "output 2", ...)."""
        if self.kind == "wrong_output":
            return f"output {index + 1}"
        return chr(ord("A") + index)

    def prompt(self):
        """What the input asks for, in words."""
        if self.kind == "number":
            return f"Your answer (a number; within \u00b1{self.tol:g} counts as right)"
        if self.kind == "shape":
            return "Your answer (a shape such as (2, 4, 3))"
        if self.kind == "choice":
            return ("Choose every right option" if len(self.correct) > 1
                    else "Choose one option")
        return "Which output is wrong?"

    def key_text(self, key):
        if self.kind == "number":
            return format_number(key, self.tol)
        if self.kind == "shape":
            return f"`{format_shape(key)}`"
        return self.label(key)

    # ---- grading ---------------------------------------------------------------------
    def check(self, answer):
        """Grade an answer as the page does.

        Parameters
        ----------
        answer : str, number, tuple or int (or list of int, for several right options)
            What the reader gave: typed text is parsed as the page parses it.

        Returns
        -------
        (verdict, explanation) : (str, str)
            ``verdict`` is ``"correct"``, ``"wrong"`` (with the explanation of that
            classic wrong answer, or the hint), or ``"unreadable"``.
        """
        if self.kind == "number":
            x = parse_number(answer) if isinstance(answer, str) else _real(self.id, "answer", answer)
            if x is None:
                return "unreadable", "Type a number, such as 0.25 or 1/4."
            if abs(x - self.answer) <= self.tol:
                return "correct", self.right
            near = [(abs(x - w), why) for w, why in self.wrong if abs(x - w) <= self.tol]
            if near:
                return "wrong", min(near, key=lambda pair: pair[0])[1]
            return "wrong", self.hint or ""
        if self.kind == "shape":
            s = parse_shape(answer) if isinstance(answer, str) else tuple(answer)
            if s is None:
                return "unreadable", "Type a shape, such as (2, 4, 3)."
            if s == self.answer:
                return "correct", self.right
            for w, why in self.wrong:
                if s == w:
                    return "wrong", why
            return "wrong", self.hint or ""
        chosen = sorted({answer} if isinstance(answer, numbers.Integral) else set(answer))
        if chosen == self.correct:
            return "correct", self.right
        whys = [why for w, why in self.wrong if w in chosen]
        if not whys and self.hint:
            whys = [self.hint]
        return "wrong", "\n\n".join(whys)

    # ---- forms -----------------------------------------------------------------------
    def data(self):
        """The question as JSON-ready data (what the page and the scripts read)."""
        out = {"id": self.id, "kind": self.kind, "text": self.text, "prompt": self.prompt(),
               "right": self.right, "hint": self.hint,
               "answer_text": self.answer_text(),
               "wrong": [{"key": (_round(k, self.tol) if self.kind == "number"
                                  else list(k) if self.kind == "shape" else k),
                          "label": self.key_text(k), "why": why} for k, why in self.wrong]}
        if self.kind == "number":
            out.update(answer=_round(self.answer, self.tol), tol=self.tol)
        elif self.kind == "shape":
            out.update(answer=list(self.answer))
        else:
            out.update(options=list(self.options), correct=list(self.correct))
        return out

    def to_json(self):
        return json.dumps(self.data(), ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))

    def markdown(self):
        """The question for Jupyter and Colab (see :func:`markdown_from_data`)."""
        return markdown_from_data(self.data())

    def directive(self):
        """The MyST the site renders (``_ext/selfcheck.py`` defines the directive)."""
        return f"````{{selfcheck}} {self.id}\n{self.to_json()}\n````\n"

    @classmethod
    def from_data(cls, data):
        """The question back from its data (:meth:`data`), to grade answers with
        :meth:`check` where only the data are at hand (a Jupyter notebook's
        :func:`register` cell)."""
        kind = data["kind"]
        if kind not in KINDS:
            _fail(data.get("id"), f"no question kind {kind!r}")
        convert = {"number": float, "shape": tuple}.get(kind, int)
        wrong = [(convert(w["key"]), w["why"]) for w in data["wrong"]]
        fields = {}
        if kind == "number":
            fields.update(answer=float(data["answer"]), tol=float(data["tol"]))
        elif kind == "shape":
            fields.update(answer=tuple(data["answer"]))
        else:
            fields.update(options=list(data["options"]), correct=list(data["correct"]))
        return cls(kind, data["id"], data["text"], data["right"], wrong, data.get("hint"),
                   **fields)

    def __repr__(self):
        return f"Self-check question {self.id}: {self.text}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """Jupyter's forms: a fixed line of text, the Markdown (on the site's build, the
        directive the site renders) and the question's data."""
        markdown = self.directive() if os.environ.get(SITE_BUILD_ENV) else self.markdown()
        QUESTIONS[self.id] = self.data()    # so that check() can answer it in this kernel
        return {"text/plain": repr(self), "text/markdown": markdown,
                MIME: self.data()}


def _common(qid, text, right, wrong, hint):
    if not isinstance(qid, str) or not ID.match(qid):
        _fail(qid, "the id must read sc-<chapter slug>-<slug> in lower case "
                   f"(letters, digits, dashes), got {qid!r}")
    return (_text(qid, "text", text), _text(qid, "right", right),
            _wrong_explanations(qid, wrong), _text(qid, "hint", hint, required=False))


def number_question(id, text, *, answer, tol, right, wrong=None, hint=None):
    """A question answered by a number, right within an absolute tolerance.

    Parameters
    ----------
    id : str
        Unique in the book: ``sc-<chapter slug>-<slug>`` (lower case, digits, dashes).
    text : str
        The question (Markdown; ``$...$`` math).
    answer : float
        The expected value, computed by the notebook (a float, a NumPy scalar or a
        one-element array).
    tol : float
        The absolute tolerance, > 0: answers within it are right. It is shown to the
        reader, and the stored data keep ``answer`` to a few decimals beyond it.
    right : str
        Why the answer is right (Markdown).
    wrong : dict {float: str}, optional
        Classic wrong answers, each computed (e.g. without the mask), with its own
        explanation. Each must lie farther than ``tol`` from ``answer`` and from the
        others.
    hint : str, optional
        The feedback for any other wrong answer.

    Returns
    -------
    Question

    Raises
    ------
    ValueError
        A malformed id, an empty text, a tolerance that is not positive, an answer or
        wrong answer that is not one finite number, or wrong answers within ``tol`` of
        the answer or of each other (the reader could not be told which was meant).

    Examples
    --------
    >>> q = number_question("sc-demo-half", "What is $1/2$?", answer=0.5, tol=1e-3,
    ...                     right="One of two.", wrong={2.0: "That is $2/1$."})
    >>> q.check("0.5004")[0], q.check("2")
    ('correct', ('wrong', 'That is $2/1$.'))
    """
    text, right, wrong, hint = _common(id, text, right, wrong, hint)
    answer = _real(id, "answer", answer)
    tol = _real(id, "tol", tol)
    if tol <= 0:
        _fail(id, f"tol must be > 0, got {tol!r}")
    pairs = [(_real(id, f"wrong answer {k!r}", k), why) for k, why in wrong.items()]
    for k, _ in pairs:
        if abs(k - answer) <= tol:
            _fail(id, f"wrong answer {k!r} is within tol={tol!r} of the answer {answer!r}: "
                      "the reader typing it would be told it is right")
    keys = sorted(k for k, _ in pairs)
    for a, b in itertools.pairwise(keys):
        if b - a <= tol:
            _fail(id, f"wrong answers {a!r} and {b!r} are within tol={tol!r} of each other")
    return Question("number", id, text, right, pairs, hint, answer=answer, tol=tol)


def shape_question(id, text, *, answer, right, wrong=None, hint=None):
    """A question answered by an array's shape.

    The reader types ``(2, 4, 3)``, ``2,4,3``, ``2 x 4 x 3`` (also ``×``, ``[...]``).

    Parameters
    ----------
    id, text, right, hint : str
        As :func:`number_question`.
    answer : tuple of int
        The expected shape, computed (e.g. ``out.shape``).
    wrong : dict {tuple of int: str}, optional
        Classic wrong shapes (e.g. with L and S swapped), each with its explanation.

    Returns
    -------
    Question

    Raises
    ------
    ValueError
        A malformed id or text, a shape that is not a non-empty tuple of non-negative
        ints, or a wrong shape equal to the answer.

    Examples
    --------
    >>> q = shape_question("sc-demo-shape", "Shape of the scores?", answer=(4, 6),
    ...                    right="L by S.", wrong={(6, 4): "That is S by L."})
    >>> q.check("4 x 6")[0], q.check("(6, 4)")[1]
    ('correct', 'That is S by L.')
    """
    text, right, wrong, hint = _common(id, text, right, wrong, hint)
    answer = _shape(id, "answer", answer)
    pairs = []
    for k, why in wrong.items():
        k = _shape(id, f"wrong answer {k!r}", k)
        if k == answer:
            _fail(id, f"wrong answer {k!r} equals the answer")
        pairs.append((k, why))
    return Question("shape", id, text, right, pairs, hint, answer=answer)


def _options(qid, name, options):
    if not isinstance(options, (list, tuple)) or len(options) < 2:
        _fail(qid, f"{name} must be a list of at least two strings, got {options!r}")
    return [_text(qid, f"{name}[{i}]", o) for i, o in enumerate(options)]


def _index(qid, name, value, n):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not 0 <= int(value) < n:
        _fail(qid, f"{name} must be an index from 0 to {n - 1}, got {value!r}")
    return int(value)


def _explained(qid, n, correct, wrong, hint, what):
    pairs = []
    for k, why in wrong.items():
        k = _index(qid, f"wrong key {k!r}", k, n)
        if k in correct:
            _fail(qid, f"wrong key {k} is a right {what}")
        pairs.append((k, why))
    missing = [i for i in range(n) if i not in correct and i not in dict(pairs)]
    if missing and hint is None:
        _fail(qid, f"{what}s {missing} are wrong but have no explanation: add them to "
                   "wrong, or give a hint")
    return sorted(pairs)


def choice_question(id, text, *, options, correct, right, wrong=None, hint=None):
    """A question with options, of which one or several are right.

    Parameters
    ----------
    id, text, right, hint : str
        As :func:`number_question`.
    options : list of str
        At least two options (Markdown, math allowed).
    correct : int or list of int
        The index of the right option, or the indices of the right options (the reader
        must choose exactly these); not every option.
    wrong : dict {int: str}
        For each wrong option, why it is wrong (an option without one needs ``hint``).

    Returns
    -------
    Question

    Raises
    ------
    ValueError
        Fewer than two options, an index out of range, every option right, a wrong key
        that is a right option, or a wrong option without explanation and no hint.

    Examples
    --------
    >>> q = choice_question("sc-demo-choice", "Which sum to 1?",
    ...                     options=["rows of A", "columns of A"], correct=0,
    ...                     right="Softmax runs over the keys.",
    ...                     wrong={1: "Columns are keys."})
    >>> q.check(0)[0], q.check([1])
    ('correct', ('wrong', 'Columns are keys.'))
    """
    text, right, wrong, hint = _common(id, text, right, wrong, hint)
    options = _options(id, "options", options)
    n = len(options)
    many = correct if isinstance(correct, (list, tuple, set)) else [correct]
    correct = sorted({_index(id, "correct", c, n) for c in many})
    if not correct:
        _fail(id, "correct must name at least one option")
    if len(correct) == n:
        _fail(id, "every option is right: nothing to choose")
    pairs = _explained(id, n, correct, wrong, hint, "option")
    return Question("choice", id, text, right, pairs, hint, options=options,
                    correct=correct)


def wrong_output_question(id, text, *, outputs, correct, right, wrong=None, hint=None):
    """"Which of these outputs is wrong?": printed outputs, one of them wrong.

    Parameters
    ----------
    id, text, right, hint : str
        As :func:`number_question`.
    outputs : list of str
        At least two printed outputs (e.g. ``np.array2string`` of computed arrays),
        shown as code.
    correct : int
        The index of the output that is wrong (the right answer).
    wrong : dict {int: str}
        For each other output, why it is right after all (an output without one needs
        ``hint``).

    Returns
    -------
    Question

    Raises
    ------
    ValueError
        Fewer than two outputs, an index out of range, or an output without explanation
        and no hint.

    Examples
    --------
    >>> q = wrong_output_question("sc-demo-output", "Which row is not a softmax?",
    ...                           outputs=["[0.5 0.5]", "[0.7 0.7]"], correct=1,
    ...                           right="It sums to 1.4.", wrong={0: "It sums to 1."})
    >>> q.check(1)[0], q.check(0)[1]
    ('correct', 'It sums to 1.')
    """
    text, right, wrong, hint = _common(id, text, right, wrong, hint)
    if not isinstance(outputs, (list, tuple)) or len(outputs) < 2 \
            or not all(isinstance(o, str) and o.strip() for o in outputs):
        _fail(id, f"outputs must be a list of at least two non-empty strings, got {outputs!r}")
    outputs = [o.rstrip() for o in outputs]
    correct = [_index(id, "correct", correct, len(outputs))]
    pairs = _explained(id, len(outputs), correct, wrong, hint, "output")
    return Question("wrong_output", id, text, right, pairs, hint, options=outputs,
                    correct=correct)


# ---- answering back in Jupyter (issue 47) ------------------------------------------------
QUESTIONS = {}      # id -> data: the questions this kernel can grade (register, display)


def encode_questions(questions):
    """A list of questions' data as one short ASCII string for :func:`register`: JSON,
    compressed and base64-encoded, so that a notebook's registering cell carries the
    answers without showing them to a learner who glances at it."""
    text = json.dumps(list(questions), ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")


def register(encoded):
    """Make the questions of :func:`encode_questions`'s string known to :func:`check`
    (the Jupyter notebooks run it in a collapsed cell before their first question).

    Returns the number of questions registered."""
    questions = json.loads(zlib.decompress(base64.b64decode(encoded)).decode("utf-8"))
    for data in questions:
        QUESTIONS[data["id"]] = data
    return len(questions)


class Feedback:
    """What :func:`check` answers: a verdict and its explanations, as Markdown (JupyterLab,
    Colab and VS Code render it, math included) and as plain text."""

    def __init__(self, verdict, markdown):
        self.verdict = verdict          # "correct", "wrong", "unreadable" or "answer"
        self.markdown = markdown

    def _repr_markdown_(self):
        return self.markdown

    def __repr__(self):
        return self.markdown


LETTERS = re.compile(r"^[A-Za-z](?:\s*[,;/&]?\s*(?:and\s+)?[A-Za-z])*$")


def _options_chosen(data, answer):
    """The options (0-based) a learner's answer names, or None if it names none: letters
    for a choice ("B", "a, c", ["A", "C"]), output numbers from 1 for "which output is
    wrong" (2, "2", "output 2")."""
    n = len(data["options"])
    items = answer if isinstance(answer, (list, tuple, set)) else [answer]
    chosen = set()
    for item in items:
        if data["kind"] == "choice":
            if not isinstance(item, str) or not LETTERS.match(item.strip()):
                return None
            letters = re.sub(r"\band\b|[\s,;/&]", "", item.strip(), flags=re.I).upper()
            indices = [ord(c) - ord("A") for c in letters]
        else:
            if isinstance(item, str):
                match = re.fullmatch(r"\s*(?:output\s*)?(\d+)\s*", item, re.I)
                if not match:
                    return None
                item = int(match[1])
            if isinstance(item, bool) or not isinstance(item, numbers.Integral):
                return None
            indices = [int(item) - 1]
        if not all(0 <= i < n for i in indices):
            return None
        chosen.update(indices)
    return sorted(chosen) or None


def _answer_markdown(data):
    lines = [f"**The answer: {data['answer_text']}.** {data['right']}"]
    for wrong in data["wrong"]:
        lines.append(f"**If you answered {wrong['label']}:** {wrong['why']}")
    if data.get("hint"):
        lines.append(f"**Any other answer:** {data['hint']}")
    return "\n\n".join(lines)


def check(id, answer=..., *, reveal=False):
    """Answer a self-check question in a Jupyter notebook and read the page's feedback.

    Parameters
    ----------
    id : str
        The question's id, as the notebook's answer cell gives it (``"sc-..."``).
    answer : number, str, tuple or list
        Your answer: a number (or text such as ``"1/4"``), a shape such as ``(2, 4, 3)``,
        an option's letter (``"B"``; several: ``"A, C"``), or for "which output is wrong"
        the output's number (``2``). Left as ``...``, nothing is graded.
    reveal : bool
        True shows the answer and the explanation of each classic wrong answer.

    Returns
    -------
    Feedback
        Displayed by Jupyter as Markdown: "Correct." with why, "Not quite." with the
        explanation of your mistake (or a hint), or "Not an answer yet." with what to type,
        as the course's page answers; or the answer, with ``reveal=True``.

    Raises
    ------
    KeyError
        An unknown id (or the notebook's registering cell has not run).

    Examples
    --------
    >>> q = choice_question("sc-demo-rows", "Which sum to 1?", options=["rows", "columns"],
    ...                     correct=0, right="Softmax runs over the keys.",
    ...                     wrong={1: "Columns are keys."})
    >>> n = register(encode_questions([q.data()]))
    >>> check("sc-demo-rows", "B")
    **Not quite.**
    <BLANKLINE>
    Columns are keys.
    <BLANKLINE>
    *Try again, or see the answer: `check("sc-demo-rows", reveal=True)`.*
    >>> check("sc-demo-rows", "a").verdict
    'correct'
    """
    if id not in QUESTIONS:
        raise KeyError(f"no self-check question {id!r} here: run the notebook's cells from the "
                       "top (the cell that registers the questions comes before the first one)")
    data = QUESTIONS[id]
    if reveal:
        return Feedback("answer", _answer_markdown(data))
    if answer is ...:
        return Feedback("unreadable", f"**Not an answer yet.** Put {answer_form(data)} in "
                                      "place of `...`, then run the cell again.")
    question = Question.from_data(data)
    if question.kind in ("choice", "wrong_output"):
        chosen = _options_chosen(data, answer)
        if chosen is None:
            return Feedback("unreadable", f"**Not an answer yet.** Give {answer_form(data)}.")
        answer = chosen
    elif question.kind == "shape" and not isinstance(answer, str):
        answer = _shape_or_none(answer)
        if answer is None:
            return Feedback("unreadable", "**Not an answer yet.** Type a shape, such as "
                                          "(2, 4, 3).")
    elif question.kind == "number" and not isinstance(answer, str):
        try:
            answer = _real(id, "answer", answer)
        except ValueError:
            return Feedback("unreadable", "**Not an answer yet.** Type a number, such as "
                                          "0.25 or 1/4.")
    verdict, why = question.check(answer)
    if verdict == "unreadable":
        return Feedback(verdict, f"**Not an answer yet.** {why}")
    if verdict == "correct":
        return Feedback(verdict, f"**Correct.** {why}")
    note = ""
    if not why and question.kind == "choice" and len(question.correct) > 1 \
            and not set(question.correct) <= set(answer):
        note = " Some right options are not chosen."
    lines = [f"**Not quite.**{note}"] + ([why] if why else [])
    lines.append(f"*Try again, or see the answer: `{check_call(data, 'reveal=True')}`.*")
    return Feedback(verdict, "\n\n".join(lines))


def _shape_or_none(value):
    try:
        dims = tuple(value)
    except TypeError:
        return None
    if not dims or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                           for d in dims):
        return None
    return tuple(int(d) for d in dims)
