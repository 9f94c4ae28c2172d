"""The exercises' machinery (rbdlearn/widgets/exercises.py) in Python: the grammar the page
shares, the order of the rules, the messages for answers that cannot be read, and that a
typed string and the equivalent value get the same verdict. The page's half
(_ext/static/scripts/exercises.js) is compared with this one in tests/test_browser.py."""

import contextlib
import io
import json
import math

import numpy as np
import pytest

from rbdlearn.widgets.exercises import (AnswerError, Exercise, between, close, has_extra,
                                        has_missing, hint, mistake, norm_close,
                                        not_symmetric, parse, right, same_set)


@pytest.mark.parametrize("text, value", [
    ("1", 1.0), ("-3*9.81/2", -14.715), ("2*pi/3", 2 * math.pi / 3), ("π", math.pi),
    ("sqrt(2)/2", math.sqrt(2) / 2), ("sin(pi/6) + cos(0)", math.sin(math.pi / 6) + 1.0),
    ("(1 + 2) * 3", 9.0), ("1 - 2 - 3", -4.0), ("8 / 4 / 2", 1.0), ("−1", -1.0),
    ("--2", 2.0), (".5", 0.5), ("1.", 1.0), ("1e-3", 0.001),
    ("[1, 2, 3]", [1.0, 2.0, 3.0]), ("[1 2 3]", [1.0, 2.0, 3.0]), ("1 2 3", [1.0, 2.0, 3.0]),
    ("[1 -2]", [1.0, -2.0]), ("[1 - 2]", [-1.0]), ("[1 -2*3]", [1.0, -6.0]),
    ("[(1 -2)]", [-1.0]), ("[sqrt(4) -1]", [2.0, -1.0]), ("[1, 2,]", [1.0, 2.0]),
    ("[[1, 0], [0 1]]", [[1.0, 0.0], [0.0, 1.0]]), ("[]", []),
])
def test_the_grammar_reads_numbers_and_lists(text, value):
    got = parse(text)
    assert np.shape(got) == np.shape(value) and np.allclose(got, value, rtol=1e-15, atol=0)


@pytest.mark.parametrize("text, reason", [
    ("", "nothing to read"), ("   ", "nothing to read"),
    ("abc", "unknown name 'abc'"), ("nan", "unknown name 'nan'"), ("3e", "unknown name 'e'"),
    ("[1, 2", "it ends too early"), ("(1", "it ends too early"), ("1 +", "it ends too early"),
    (")", "unexpected ')'"), ("1,,2", "unexpected ','"), ("1 # 2", "unexpected character '#'"),
    ("sqrt 2", "expected '(' before '2'"), ("sqrt(-1)", "square root of a negative"),
    ("1/0", "division by zero"), ("2*[1]", "unexpected '['"),
])
def test_the_grammar_names_what_it_cannot_read(text, reason):
    with pytest.raises(AnswerError) as err:
        parse(text)
    assert reason in str(err.value)


def test_set_answers_read_pairs_integers_and_names():
    assert parse("[(1, 5), (5, 1)]", "set") == [[1.0, 5.0], [5.0, 1.0]]
    assert parse("(1, 5) [5, 1]", "set") == [[1.0, 5.0], [5.0, 1.0]]
    assert parse("{3, -4}", "set") == [3.0, -4.0]
    assert parse("a, 'b c', \"d\"", "set") == ["a", "b c", "d"]
    with pytest.raises(AnswerError, match="unexpected"):
        parse("(1, 2) + 3", "set")


def vector_exercise():
    return Exercise("t-vector", shape=(3,), rules=[
        right("the right one.", close([1.0, 2.0, 3.0])),
        mistake("first two zero.", close(0.0, part=np.s_[:2])),
        mistake("tail of length 5.", norm_close(5.0, part=np.s_[1:])),
        mistake("all large.", between(lo=10)),
        hint("fallback.")])


@pytest.mark.parametrize("answer, ok, line", [
    ([1, 2, 3], True, "✓ right: the right one."),
    ([1, 2, 3 + 2e-5], True, "✓ right: the right one."),           # within rtol 1e-5
    ([1, 2, 3 + 4e-5], False, "✗ not yet: fallback."),             # outside it
    ([0, 0, 5], False, "✗ not yet: first two zero."),
    ([0, 0, 12], False, "✗ not yet: first two zero."),        # before "all large": order
    ([0, 3, 4], False, "✗ not yet: tail of length 5."),
    ([11, 12, 13], False, "✗ not yet: all large."),
    ([1, 2, 4], False, "✗ not yet: fallback."),
])
def test_the_first_rule_that_holds_gives_the_verdict(answer, ok, line):
    assert vector_exercise().verdict(answer) == (ok, line)


@pytest.mark.parametrize("answer, line", [
    ("", "✗ not yet: nothing to read; expected a list of 3 numbers."),
    ("[1, 2", "✗ not yet: could not read the answer (it ends too early); expected a list "
              "of 3 numbers."),
    ([1, 2], "✗ not yet: got a list of 2 numbers; expected a list of 3 numbers."),
    ([[1, 2, 3]], "✗ not yet: got an array of shape 1x3; expected a list of 3 numbers."),
    ("[[1, 2], [3]]", "✗ not yet: the rows have different lengths; expected a list of 3 "
                      "numbers."),
    ([1, 2, float("nan")], "✗ not yet: an entry is not a finite number; expected a list "
                           "of 3 numbers."),
    ("[1, 2, 1e999]", "✗ not yet: an entry is not a finite number; expected a list of 3 "
                      "numbers."),
    ([1, "a", 2], "✗ not yet: could not read the answer as numbers; expected a list of 3 "
                  "numbers."),
    (object(), "✗ not yet: could not read the answer as numbers; expected a list of 3 "
               "numbers."),
])
def test_malformed_answers_get_a_message_not_an_exception(answer, line):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert vector_exercise()(answer) is False
    assert out.getvalue() == line + "\n"


def test_unanswered_prints_not_answered_yet_and_the_static_page_gets_a_form(monkeypatch):
    ex = vector_exercise()
    monkeypatch.delenv("RBDLEARN_STATIC_WIDGETS", raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert ex(None) is False
    assert out.getvalue() == "not answered yet\n"
    html = ex.html()
    assert 'class="rbd-exercise"' in html and 'aria-live="polite"' in html
    data = html.split('<script type="application/json" class="rbd-ex-data">')[1]
    assert json.loads(data.split("</script>")[0]) == ex.to_json()


@pytest.mark.parametrize("text, value", [
    ("[1 2 3]", [1, 2, 3]), ("[0, 0, 5]", [0, 0, 5]), ("0 3 4", [0, 3, 4]),
    ("[11, 12, 13]", [11, 12, 13]), ("[1, 2, 4]", [1, 2, 4]), ("[1, 2]", [1, 2]),
    ("[sqrt(1), 4/2, 3]", [1, 2, 3]),
])
def test_a_string_and_its_value_get_the_same_verdict(text, value):
    ex = vector_exercise()
    assert ex.verdict(text) == ex.verdict(value) == ex.verdict(np.array(value, float))


def test_integer_and_set_forms():
    d = Exercise("t-int", kind="integer", rules=[
        right("23.", close(23)), mistake("too few.", between(hi=22)), hint("fewer.")])
    assert d.verdict(23) == (True, "✓ right: 23.") and d.verdict("23") == d.verdict(23.0)
    assert d.verdict("22.5") == (False, "✗ not yet: an entry is not a whole number; "
                                        "expected a whole number.")
    assert d.verdict(7)[1] == "✗ not yet: too few." and d.verdict(30)[1] == "✗ not yet: fewer."
    pairs = [(1, 5), (5, 1), (2, 6), (6, 2)]
    s = Exercise("t-set", kind="set", items="pair", rules=[
        right("all.", same_set(pairs)), mistake("both orders.", same_set([(1, 5), (2, 6)])),
        mistake("{extra} are extra.", has_extra(pairs)),
        mistake("you missed {missing}.", has_missing(pairs))])
    assert s.verdict({(6, 2), (2, 6), (5, 1), (1, 5), (1, 5)})[0]
    assert s.verdict(np.array(pairs))[0] and s.verdict([[1, 5], (5.0, 1), (2, 6), (6, 2)])[0]
    assert s.verdict("[(1,5), (2,6)]") == (False, "✗ not yet: both orders.")
    assert s.verdict("(9, 9) (1, 5) (0, 3) (7, 1) (4, 4)") == (
        False, "✗ not yet: (0, 3), (4, 4), (7, 1) are extra.")
    assert s.verdict([(1, 5)]) == (False, "✗ not yet: you missed (2, 6), (5, 1), (6, 2).")
    assert s.verdict("[1, 5]") == s.verdict([1, 5]) == (
        False, "✗ not yet: an item is not of the kind asked for; expected pairs of whole "
               "numbers, like (1, 2), (2, 1).")
    with pytest.raises(ValueError, match="needs a has_extra test"):
        Exercise("t-bad", kind="set", items="pair", rules=[mistake("{extra}", same_set([]))])


def test_not_symmetric_and_parts_of_a_matrix():
    m = Exercise("t-matrix", shape=(2, 2), rules=[
        right("identity.", close(np.eye(2))),
        mistake("corner.", close(7.0, part=(1, 1))),
        mistake("not symmetric.", not_symmetric()), hint("symmetric.")])
    assert m.verdict("[[1, 0], [0, 7]]")[1] == "✗ not yet: corner."
    assert m.verdict("[[1, 2], [3, 4]]")[1] == "✗ not yet: not symmetric."
    assert m.verdict("[[1, 2], [2, 4]]")[1] == "✗ not yet: symmetric."


def test_an_exercise_rebuilt_from_its_json_is_the_same():
    ex = vector_exercise()
    again = Exercise.from_json(json.loads(json.dumps(ex.to_json())))
    assert again.to_json() == ex.to_json()
    for answer in ([1, 2, 3], [0, 3, 4], "abc", [1, 2, 3 + 4e-5]):
        assert again.verdict(answer) == ex.verdict(answer)


def test_a_function_goes_to_the_function_checker_and_a_value_to_the_rules():
    seen = []
    ex = Exercise("t-fn", shape=(), function=lambda f: seen.append(f(2)) or True,
                  rules=[right("four.", close(4.0))])
    with contextlib.redirect_stdout(io.StringIO()):
        assert ex(lambda x: x * x) and seen == [4]
        assert ex("2*2") and not ex(5)
