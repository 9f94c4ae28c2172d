"""The grammar of an exercise's typed answer, the one the static page's script
(_ext/static/scripts/exercises.js) implements too: numbers, ``[…]`` lists (items separated
by commas or whitespace: inside brackets ``[1 -2]`` is two items, ``[1 - 2]`` one), ``pi``
(``π``), ``sqrt``, ``sin``, ``cos``, unary minus, ``+ − * /`` and parentheses; for sets,
integers, pairs and names. :mod:`rbdlearn.widgets.exercises` checks what it reads.
"""

import math
import re

from ..errors import AnswerError

__all__ = ["parse"]

_TOKEN = re.compile(r"(?:([0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)"
                    r"|([A-Za-z_][A-Za-z_0-9]*|π)|('[^']*'|\"[^\"]*\")|([\[\](),+\-*/{}]))")
_SPACE = re.compile(r"[ \t\n\r\f\v\u00a0]")
_FUNCTIONS = {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos}


def _tokens(text):
    """(kind, text, space before, space after) for each token; kind: num, name, str, op."""
    text = text.replace("\u2212", "-")
    out, pos = [], 0
    while pos < len(text):
        if _SPACE.match(text[pos]):
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise AnswerError(f"could not read the answer (unexpected character "
                              f"'{text[pos]}')")
        kind = ("num", "name", "str", "op")[[g is not None for g in m.groups()].index(True)]
        start = m.start(m.lastindex)
        before = start > 0 and bool(_SPACE.match(text[start - 1]))
        after = m.end() < len(text) and bool(_SPACE.match(text[m.end()]))
        out.append((kind, m.group(m.lastindex), before, after))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text):
        self.toks, self.k = _tokens(text), 0

    def peek(self):
        return self.toks[self.k] if self.k < len(self.toks) else None

    def is_op(self, *ops):
        t = self.peek()
        return t is not None and t[0] == "op" and t[1] in ops

    def take(self):
        t = self.peek()
        if t is None:
            raise AnswerError("could not read the answer (it ends too early)")
        self.k += 1
        return t

    def expect(self, op):
        t = self.take()
        if t[0] != "op" or t[1] != op:
            raise AnswerError(f"could not read the answer (expected '{op}' "
                              f"before '{t[1]}')")

    def unexpected(self):
        t = self.peek()
        if t is None:
            return AnswerError("could not read the answer (it ends too early)")
        return AnswerError(f"could not read the answer (unexpected '{t[1]}')")

    # numbers
    def items(self, end, item):
        out = []
        while not (self.peek() is None if end is None else self.is_op(end)):
            if self.peek() is None:
                raise self.unexpected()
            out.append(item())
            if self.is_op(","):
                self.take()
        return out

    def element(self):
        if self.is_op("["):
            self.take()
            out = self.items("]", self.element)
            self.expect("]")
            return out
        return self.expr(True)

    def expr(self, in_list):
        x = self.term()
        while self.is_op("+", "-"):
            t = self.peek()
            if in_list and t[2] and not t[3]:     # "[1 -2]": a new item
                break
            self.take()
            y = self.term()
            x = x + y if t[1] == "+" else x - y
        return x

    def term(self):
        x = self.unary()
        while self.is_op("*", "/"):
            op = self.take()[1]
            y = self.unary()
            if op == "*":
                x = x * y
            elif y == 0:
                raise AnswerError("could not read the answer (a division by zero)")
            else:
                x = x / y
        return x

    def unary(self):
        if self.is_op("-"):
            self.take()
            return -self.unary()
        if self.is_op("+"):
            self.take()
            return self.unary()
        return self.primary()

    def primary(self):
        t = self.peek()
        if t is not None and t[0] == "num":
            self.take()
            return float(t[1])
        if t is not None and t[0] == "name":
            self.take()
            if t[1] in ("pi", "π"):
                return math.pi
            if t[1] in _FUNCTIONS:
                self.expect("(")
                x = self.expr(False)
                self.expect(")")
                if t[1] == "sqrt" and x < 0:
                    raise AnswerError("could not read the answer (the square root of a "
                                      "negative number)")
                return _FUNCTIONS[t[1]](x)
            raise AnswerError(f"could not read the answer (unknown name '{t[1]}')")
        if self.is_op("("):
            self.take()
            x = self.expr(False)
            self.expect(")")
            return x
        raise self.unexpected()

    # set items
    def set_item(self):
        t = self.peek()
        if self.is_op("(", "["):
            close_op = ")" if self.take()[1] == "(" else "]"
            out = self.items(close_op, self.set_item)
            self.expect(close_op)
            return out
        if self.is_op("-"):
            self.take()
            t = self.take()
            if t[0] != "num":
                raise AnswerError(f"could not read the answer (unexpected '{t[1]}')")
            return -float(t[1])
        if t is not None and t[0] == "num":
            self.take()
            return float(t[1])
        if t is not None and t[0] in ("name", "str"):
            self.take()
            return t[1] if t[0] == "name" else t[1][1:-1]
        raise self.unexpected()


def parse(text, kind="float"):
    """Read ``text`` with the page's grammar: nested lists of floats (``kind`` "float" or
    "integer"), or, for ``kind="set"``, a list of items (float, str or list of those).
    Raises :class:`AnswerError` with the reason."""
    p = _Parser(text)
    if not p.toks:
        raise AnswerError("nothing to read")
    if kind == "set":
        if len(p.toks) >= 2 and p.is_op("{", "[") and p.toks[-1][1] == (
                "}" if p.toks[0][1] == "{" else "]") and _one_group(p.toks):
            close_op = "}" if p.take()[1] == "{" else "]"
            out = p.items(close_op, p.set_item)
            p.expect(close_op)
        else:
            out = p.items(None, p.set_item)
        if p.peek() is not None:
            raise p.unexpected()
        return out
    out = p.items(None, p.element)
    return out[0] if len(out) == 1 else out


def _one_group(toks):
    """The first bracket closes at the last token: "[(1, 2), (2, 1)]", not "[1, 2], [2, 1]"."""
    depth = 0
    for k, t in enumerate(toks):
        if t[0] == "op" and t[1] in "[({":
            depth += 1
        elif t[0] == "op" and t[1] in "])}":
            depth -= 1
            if depth == 0:
                return k == len(toks) - 1
    return False
