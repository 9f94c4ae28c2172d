"""The book's exercises: one description, checked in a kernel and in the static page.

An :class:`Exercise` is a name, the form of its answer and an ordered list of rules::

    check_ex1 = Exercise("ch1-1-ex1", shape=(6, 6), rules=[
        right("ᴮX_A = plux(Rᵀ, r) with R = rotz(90°).", close(S.plux(R.T, r))),
        mistake("you used E = R; …", close(S.plux(R, r))),
        mistake("the lower-left block is −E (r×).", close(X1), ...),   # several tests: all
        hint("compare your blocks with (sv-plux).")])                   # no test: always

- **Form** (keyword arguments): ``kind="float"`` (default) with ``shape`` (``()`` a number,
  ``(6,)``, ``(6, 6)``, …); ``kind="integer"`` with ``shape`` (whole numbers); or
  ``kind="set"`` with ``items="pair"`` (pairs of whole numbers), ``"integer"`` or ``"name"``
  (an unordered collection; repeated items count once).
- **Rules**, tried in order, the first whose tests all hold gives the verdict:
  :func:`right` (verdict right), :func:`mistake` (not yet), :func:`hint` (a rule with no
  test: the fallback; an exercise without one gets "compare your answer with the
  statement."). Every message is fixed when the exercise is defined (compute the values in
  it with the package), except ``{extra}`` / ``{missing}`` in set rules: the first three
  such items of the answer, sorted, e.g. ``(1, 5), (1, 6), (2, 5)``.
- **Tests**: :func:`close` (the answer, or ``part`` of it — any numpy index into an answer
  of the exercise's shape, e.g. ``np.s_[:3]``, ``(1, 1)``, ``np.s_[:3, 3:]`` — within
  ``rtol``/``atol`` of ``value``, entry by entry, as ``numpy.isclose``: ``|a − v| ≤ atol +
  rtol |v|``; a scalar value is compared with every entry); :func:`norm_close` (the
  Euclidean norm of the part within tolerance of a number); :func:`between` (every entry
  of the part in ``[lo, hi]``, either bound may be None); :func:`not_symmetric` (a square
  answer that is not symmetric within tolerance); for sets :func:`same_set`,
  :func:`has_extra` (an item not in the given ones), :func:`has_missing` (one of the given
  items left out).

In a kernel, ``ex(answer)`` (= ``ex.check(answer)``) prints ``✓ right: …``, ``✗ not yet: …``
or ``not answered yet`` (``answer is None``) and returns True/False. The answer is a Python
value (a number, an array-like, a set or list of pairs or names) or a string, read with the
page's grammar (:func:`parse`): numbers, ``[…]`` lists (items separated by commas or
whitespace; inside brackets ``[1 -2]`` is two items, ``[1 - 2]`` one, as in MATLAB), ``pi``
(``π``), ``sqrt(…)``, ``sin(…)``, ``cos(…)``, unary minus, ``+ − * /``, parentheses; for
sets, integers, pairs ``(i, j)`` or ``[i, j]``, names bare or quoted. Several top-level
items without brackets are a list. An answer that cannot be read, has the wrong shape, a
NaN or infinite entry, or is not whole where whole numbers are asked for, gets ``✗ not yet:
<what is wrong>; expected <the form>.`` (never an exception). :meth:`Exercise.verdict`
returns ``(ok, line)`` without printing.

An exercise that asks for a function takes ``function=checker``: ``ex(f)`` with ``f``
callable runs ``checker(f)`` (which reports with :func:`report`), and every other answer is
the exercise's *page question* — the value the rules describe, asked on the static page
under "Without a kernel:".

In the static page: with ``RBDLEARN_STATIC_WIDGETS=1`` (the book's build, see
:mod:`~rbdlearn.widgets.core`), ``ex(None)`` displays :meth:`Exercise.html` instead of
printing: a text field, a Check button, the result line (``aria-live``) and the exercise's
JSON (:meth:`Exercise.to_json`) in a ``<script type="application/json">``, inside
``<div class="rbd-exercise">``. The page script ``_ext/static/scripts/exercises.js`` (added
to the pages that have such a div by ``_ext/rbdlearn_html.py``) parses the typed text with
the same grammar, runs the same rules and shows the same line; it exposes
``window.rbdExercises.evaluate(data, text) → {right, line}`` for the tests.

JSON (:meth:`Exercise.to_json`, :meth:`Exercise.from_json` rebuilds an equal exercise)::

    {"name": "ch1-1-ex1", "kind": "float", "shape": [6, 6], "items": null,
     "rules": [{"right": true, "message": "…",
                "tests": [{"test": "close", "part": [0, 1, …] or null,
                           "value": [flat, row-major], "rtol": 1e-05, "atol": 1e-08},
                          {"test": "norm", "part": …, "value": 25.0, "rtol": …, "atol": …},
                          {"test": "between", "part": …, "lo": 3 or null, "hi": null},
                          {"test": "not_symmetric", "rtol": …, "atol": …},
                          {"test": "same_set" | "has_extra" | "has_missing",
                           "items": [[1, 5], …] or [3, …] or ["name", …]}]}, …]}

``part`` is a list of flat (row-major) indices into the answer.
"""

import json
import math
import re
from html import escape

import numpy as np

from ..errors import AnswerError
from .core import static_build
from .grammar import parse

__all__ = ["Exercise", "right", "mistake", "hint", "close", "norm_close", "between",
           "not_symmetric", "same_set", "has_extra", "has_missing", "report", "parse",
           "AnswerError"]

RIGHT, WRONG, UNANSWERED = "✓ right: ", "✗ not yet: ", "not answered yet"


def report(ok, message):
    """Print ``✓ right: message`` or ``✗ not yet: message`` and return ``ok``."""
    print((RIGHT if ok else WRONG) + message)
    return ok


# --- rules and tests -----------------------------------------------------------------

class _Rule:
    def __init__(self, ok, message, tests):
        self.ok, self.message, self.tests = bool(ok), str(message), list(tests)


def right(message, *tests):
    """The rule of the right answer: all ``tests`` hold → ``✓ right: message``."""
    return _Rule(True, message, tests)


def mistake(message, *tests):
    """A known mistake: all ``tests`` hold → ``✗ not yet: message``."""
    return _Rule(False, message, tests)


def hint(message):
    """The fallback: ``✗ not yet: message`` for any answer that no earlier rule took."""
    return _Rule(False, message, ())


def close(value, part=None, rtol=1e-5, atol=1e-8):
    """The answer (or ``part`` of it, a numpy index) equals ``value`` within tolerance."""
    return {"test": "close", "part": part, "value": value, "rtol": rtol, "atol": atol}


def norm_close(value, part=None, rtol=1e-5, atol=1e-8):
    """The Euclidean norm of the answer (or of ``part``) equals ``value`` within tolerance."""
    return {"test": "norm", "part": part, "value": value, "rtol": rtol, "atol": atol}


def between(lo=None, hi=None, part=None):
    """Every entry of the answer (or of ``part``) is ≥ lo and ≤ hi (None: no bound)."""
    return {"test": "between", "part": part, "lo": lo, "hi": hi}


def not_symmetric(rtol=1e-5, atol=1e-8):
    """A square answer A with some |A_ij − A_ji| > atol + rtol |A_ji|."""
    return {"test": "not_symmetric", "rtol": rtol, "atol": atol}


def same_set(items):
    """A set answer with exactly these items."""
    return {"test": "same_set", "items": items}


def has_extra(items):
    """A set answer with an item not among ``items`` (``{extra}`` in the message)."""
    return {"test": "has_extra", "items": items}


def has_missing(items):
    """A set answer without one of ``items`` (``{missing}`` in the message)."""
    return {"test": "has_missing", "items": items}


def _shape(x):
    if not isinstance(x, list):
        return ()
    shapes = [_shape(y) for y in x]
    if any(s != shapes[0] for s in shapes):
        raise AnswerError("the rows have different lengths")
    return (len(x),) + (shapes[0] if shapes else ())


def _flat(x):
    return [z for y in x for z in _flat(y)] if isinstance(x, list) else [x]


# --- forms ---------------------------------------------------------------------------

def _describe(kind, shape, items=None):
    if kind == "set":
        return {"pair": "pairs of whole numbers, like (1, 2), (2, 1)",
                "integer": "whole numbers, like 1, 2, 3",
                "name": "names, like a, b"}[items]
    whole = kind == "integer"
    if len(shape) == 0:
        return "a whole number" if whole else "a number"
    if len(shape) == 1:
        return (f"a list of {shape[0]} {'whole ' if whole else ''}"
                f"number{'' if shape[0] == 1 else 's'}")
    return (f"an array of shape {'x'.join(str(n) for n in shape)}"
            f"{' of whole numbers' if whole else ''}")


def _example(kind, shape, items=None):
    if kind == "set":
        return {"pair": "(1, 2), (2, 1)", "integer": "1, 2, 3", "name": "a, b"}[items]
    if len(shape) == 0:
        return "3" if kind == "integer" else "-3*9.81/2 or sqrt(2)/2"
    if len(shape) == 1:
        return "[" + ", ".join(["1", "0", "-2.5", "…"][:min(shape[0], 3)]
                               + (["…"] if shape[0] > 3 else [])) + "]"
    return "[[1, 0, …], [0, 1, …], …]  (one row per [ ])"


_HELP = ("Type numbers, [ ] lists, pi, sqrt( ), sin( ), cos( ), + − * / and ( ); "
         "press Enter or Check.",
         "Type the items separated by commas; press Enter or Check.")


def _item_key(item):
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False)


def _item_text(item):
    if isinstance(item, list):
        return "(" + ", ".join(_item_text(x) for x in item) + ")"
    return f"'{item}'" if isinstance(item, str) else str(item)


def _sort_key(item):
    return ([(0, x, "") if not isinstance(x, str) else (1, 0, x) for x in item]
            if isinstance(item, list) else
            [(0, item, "") if not isinstance(item, str) else (1, 0, item)])


def _json_item(item):
    """A set item as JSON: int, str, or a list of those."""
    if isinstance(item, (tuple, list)):
        return [_json_item(x) for x in item]
    if isinstance(item, str):
        return item
    x = float(item)
    return int(x) if math.isfinite(x) and x == math.floor(x) else x


class Exercise:
    """An exercise: its name, its answer's form and its rules (see the module docstring).
    Call it (or :meth:`check`) with an answer; :meth:`to_json` / :meth:`from_json`."""

    def __init__(self, name, rules, shape=(), kind="float", items=None, function=None):
        if kind not in ("float", "integer", "set"):
            raise ValueError(f"kind must be float, integer or set, not {kind!r}")
        if kind == "set" and items not in ("pair", "integer", "name"):
            raise ValueError(f"a set exercise needs items= pair, integer or name, not {items!r}")
        self.name, self.kind, self.items, self.function = name, kind, items, function
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.shape = () if kind == "set" else tuple(int(n) for n in shape)
        rules = list(rules)
        if not rules or rules[-1].tests:
            rules.append(hint("compare your answer with the statement."))
        self.rules = [self._compiled(r) for r in rules]

    # -- building
    def _part(self, part):
        if part is None:
            return None
        size = int(np.prod(self.shape)) if self.shape else 1
        idx = np.arange(size).reshape(self.shape)[part]
        return [int(i) for i in np.ravel(idx)]

    def _compiled(self, rule):
        tests = []
        for t in rule.tests:
            t = dict(t)
            if "part" in t:
                t["part"] = self._part(t["part"]) if not (
                    isinstance(t["part"], list) and all(isinstance(i, int) for i in t["part"])
                ) else t["part"]
            if t["test"] == "close":
                n = len(t["part"]) if t["part"] is not None else int(np.prod(self.shape))
                v = np.asarray(t["value"], dtype=float).ravel()
                if v.size == 1:
                    v = np.full(n, v[0])
                if v.size != n:
                    raise ValueError(f"{self.name}: a close() value has {v.size} entries, "
                                     f"its part {n}")
                t["value"] = [float(x) for x in v]
            elif t["test"] == "norm":
                t["value"] = float(t["value"])
            elif t["test"] == "between":
                t["lo"] = None if t["lo"] is None else float(t["lo"])
                t["hi"] = None if t["hi"] is None else float(t["hi"])
            elif t["test"] in ("same_set", "has_extra", "has_missing"):
                t["items"] = sorted((_json_item(x) for x in t["items"]), key=_sort_key)
            if "rtol" in t:
                t["rtol"], t["atol"] = float(t["rtol"]), float(t["atol"])
            tests.append(t)
        for name, kind in (("{extra}", "has_extra"), ("{missing}", "has_missing")):
            if name in rule.message and not any(t["test"] == kind for t in tests):
                raise ValueError(f"{self.name}: a message with {name} needs a {kind} test")
        return _Rule(rule.ok, rule.message, tests)

    def to_json(self):
        """The exercise as a JSON-ready dict (the format in the module docstring)."""
        return {"name": self.name, "kind": self.kind, "shape": list(self.shape),
                "items": self.items,
                "rules": [{"right": r.ok, "message": r.message, "tests": r.tests}
                          for r in self.rules]}

    @classmethod
    def from_json(cls, data):
        rules = [_Rule(r["right"], r["message"], r["tests"]) for r in data["rules"]]
        return cls(data["name"], rules, shape=tuple(data["shape"]), kind=data["kind"],
                   items=data["items"])

    # -- reading an answer
    def describe(self):
        """The expected form in words, e.g. "a list of 6 numbers"."""
        return _describe(self.kind, self.shape, self.items)

    def _read(self, answer):
        """The answer as a flat list of floats, or a list of set items (JSON form)."""
        if isinstance(answer, str):
            value = parse(answer, self.kind)
        elif self.kind == "set":
            try:
                value = [_json_item(x) for x in (answer.tolist() if isinstance(
                    answer, np.ndarray) else answer)]
            except (TypeError, ValueError):
                raise AnswerError("could not read the answer as a collection of items")
        else:
            try:
                a = np.asarray(answer, dtype=float)
            except (TypeError, ValueError):
                raise AnswerError("could not read the answer as numbers")
            value = a.tolist()
        if self.kind == "set":
            return self._set_items(value)
        shape = _shape(value)
        flat = _flat(value)
        if shape != self.shape and not (self.shape == () and len(flat) == 1):
            raise AnswerError("got " + _describe("float", shape))
        if not all(math.isfinite(x) for x in flat):
            raise AnswerError("an entry is not a finite number")
        if self.kind == "integer" and not all(x == math.floor(x) for x in flat):
            raise AnswerError("an entry is not a whole number")
        return flat

    def _set_items(self, value):
        out, seen = [], set()
        for item in value:
            ok = {"pair": isinstance(item, list) and len(item) == 2
                  and all(_whole(x) for x in item),
                  "integer": _whole(item), "name": isinstance(item, str)}[self.items]
            if not ok:
                raise AnswerError("an item is not of the kind asked for")
            item = [int(x) for x in item] if isinstance(item, list) else (
                item if isinstance(item, str) else int(item))
            if _item_key(item) not in seen:
                seen.add(_item_key(item))
                out.append(item)
        return out

    # -- the rules
    def _holds(self, t, a):
        kind = t["test"]
        if kind in ("same_set", "has_extra", "has_missing"):
            given = {_item_key(x) for x in a}
            ref = {_item_key(x) for x in t["items"]}
            if kind == "same_set":
                return given == ref
            return bool(given - ref) if kind == "has_extra" else bool(ref - given)
        if kind == "not_symmetric":
            if len(self.shape) != 2 or self.shape[0] != self.shape[1]:
                return False
            n = self.shape[0]
            return any(abs(a[i * n + j] - a[j * n + i]) > t["atol"] + t["rtol"] *
                       abs(a[j * n + i]) for i in range(n) for j in range(n))
        x = a if t["part"] is None else [a[i] for i in t["part"]]
        if kind == "close":
            return all(abs(p - v) <= t["atol"] + t["rtol"] * abs(v)
                       for p, v in zip(x, t["value"]))
        if kind == "norm":
            s = 0.0
            for p in x:
                s += p * p
            return abs(math.sqrt(s) - t["value"]) <= t["atol"] + t["rtol"] * abs(t["value"])
        if kind == "between":
            return all((t["lo"] is None or p >= t["lo"]) and (t["hi"] is None or p <= t["hi"])
                       for p in x)
        raise ValueError(f"unknown test {kind!r}")

    def _message(self, rule, a):
        message = rule.message
        for name, kind in (("{extra}", "has_extra"), ("{missing}", "has_missing")):
            if name in message:
                t = next(t for t in rule.tests if t["test"] == kind)
                given = {_item_key(x) for x in a}
                ref = {_item_key(x) for x in t["items"]}
                pool = ([x for x in a if _item_key(x) not in ref] if kind == "has_extra"
                        else [x for x in t["items"] if _item_key(x) not in given])
                text = ", ".join(_item_text(x) for x in sorted(pool, key=_sort_key)[:3])
                message = message.replace(name, text)
        return message

    def verdict(self, answer):
        """``(ok, line)`` for an answer (not None, not a function): the line printed."""
        try:
            a = self._read(answer)
        except AnswerError as err:
            return False, f"{WRONG}{err}; expected {self.describe()}."
        for rule in self.rules:
            if all(self._holds(t, a) for t in rule.tests):
                return rule.ok, (RIGHT if rule.ok else WRONG) + self._message(rule, a)
        raise AssertionError("the last rule has no test")   # __init__ ensures one

    def check(self, answer):
        """Print the verdict on ``answer`` and return True/False (module docstring)."""
        if answer is None:
            if static_build():
                from IPython.display import HTML, display
                display(HTML(self.html()))
            else:
                print(UNANSWERED)
            return False
        if callable(answer) and self.function is not None:
            return bool(self.function(answer))
        ok, line = self.verdict(answer)
        print(line)
        return ok

    __call__ = check

    def html(self):
        """The static page's form: field, Check button, result line, the JSON."""
        data = json.dumps(self.to_json(), ensure_ascii=False).replace("</", "<\\/")
        ident = "rbd-ex-" + re.sub(r"[^A-Za-z0-9_-]", "-", self.name)
        return (f'<div class="rbd-exercise" data-exercise="{escape(self.name)}">'
                f'<label for="{ident}">Your answer: {escape(self.describe())}</label>'
                f'<div class="rbd-ex-row"><input id="{ident}" class="rbd-ex-input" '
                f'type="text" autocomplete="off" autocapitalize="off" spellcheck="false" '
                f'placeholder="{escape(_example(self.kind, self.shape, self.items))}">'
                f'<button type="button" class="rbd-ex-check">Check</button></div>'
                f'<p class="rbd-ex-result" aria-live="polite">{UNANSWERED}</p>'
                f'<p class="rbd-ex-help">{escape(_HELP[self.kind == "set"])}</p>'
                f'<script type="application/json" class="rbd-ex-data">{data}</script></div>')

    def __repr__(self):
        return f"Exercise({self.name!r}, {self.describe()}, {len(self.rules)} rules)"


def _whole(x):
    return (not isinstance(x, (str, list, bool)) and isinstance(x, (int, float, np.number))
            and math.isfinite(x) and float(x) == math.floor(x))
