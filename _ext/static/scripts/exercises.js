/* The book's exercises in the static page: the same grammar and rules as
   rbdlearn/widgets/exercises.py (read its module docstring), in plain JavaScript.
   Each <div class="rbd-exercise"> holds a text field, a Check button, a result line and
   the exercise's JSON; Enter or Check shows the verdict on the typed answer.
   window.rbdExercises.evaluate(data, text) -> {right, line} is what the tests call. */
(function () {
  "use strict";
  var RIGHT = "\u2713 right: ", WRONG = "\u2717 not yet: ";
  /* a number | a name | a quoted string | an operator (as _TOKEN in grammar.py) */
  var TOKEN = new RegExp(
    "(?:([0-9]+\\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\\.[0-9]+(?:[eE][+-]?[0-9]+)?)" +
    "|([A-Za-z_][A-Za-z_0-9]*|\u03c0)|('[^']*'|\"[^\"]*\")|([\\[\\](),+\\-*\\/{}]))", "y");
  var SPACE = /[ \t\n\r\f\v\u00a0]/;
  var FUNCTIONS = {sqrt: Math.sqrt, sin: Math.sin, cos: Math.cos};
  var KINDS = ["num", "name", "str", "op"];

  function AnswerError(message) { this.message = message; }

  function tokens(text) {
    text = text.replace(/\u2212/g, "-");
    var out = [], pos = 0;
    while (pos < text.length) {
      if (SPACE.test(text[pos])) { pos += 1; continue; }
      TOKEN.lastIndex = pos;
      var m = TOKEN.exec(text);
      if (!m) {
        throw new AnswerError("could not read the answer (unexpected character '" +
                              String.fromCodePoint(text.codePointAt(pos)) + "')");
      }
      var g = [1, 2, 3, 4].filter(function (k) { return m[k] !== undefined; })[0];
      var end = pos + m[0].length;
      out.push({kind: KINDS[g - 1], text: m[g],
                before: pos > 0 && SPACE.test(text[pos - 1]),
                after: end < text.length && SPACE.test(text[end])});
      pos = end;
    }
    return out;
  }

  function Parser(text) { this.toks = tokens(text); this.k = 0; }
  Parser.prototype = {
    peek: function () { return this.k < this.toks.length ? this.toks[this.k] : null; },
    isOp: function () {
      var t = this.peek();
      return t !== null && t.kind === "op" && Array.prototype.indexOf.call(arguments, t.text) >= 0;
    },
    take: function () {
      var t = this.peek();
      if (t === null) throw new AnswerError("could not read the answer (it ends too early)");
      this.k += 1;
      return t;
    },
    expect: function (op) {
      var t = this.take();
      if (t.kind !== "op" || t.text !== op) {
        throw new AnswerError("could not read the answer (expected '" + op + "' before '" +
                              t.text + "')");
      }
    },
    unexpected: function () {
      var t = this.peek();
      if (t === null) return new AnswerError("could not read the answer (it ends too early)");
      return new AnswerError("could not read the answer (unexpected '" + t.text + "')");
    },
    items: function (end, item) {
      var out = [];
      while (!(end === null ? this.peek() === null : this.isOp(end))) {
        if (this.peek() === null) throw this.unexpected();
        out.push(item.call(this));
        if (this.isOp(",")) this.take();
      }
      return out;
    },
    element: function () {
      if (this.isOp("[")) {
        this.take();
        var out = this.items("]", this.element);
        this.expect("]");
        return out;
      }
      return this.expr(true);
    },
    expr: function (inList) {
      var x = this.term();
      while (this.isOp("+", "-")) {
        var t = this.peek();
        if (inList && t.before && !t.after) break;       /* "[1 -2]": a new item */
        this.take();
        var y = this.term();
        x = t.text === "+" ? x + y : x - y;
      }
      return x;
    },
    term: function () {
      var x = this.unary();
      while (this.isOp("*", "/")) {
        var op = this.take().text;
        var y = this.unary();
        if (op === "*") x = x * y;
        else if (y === 0) throw new AnswerError("could not read the answer (a division by zero)");
        else x = x / y;
      }
      return x;
    },
    unary: function () {
      if (this.isOp("-")) { this.take(); return -this.unary(); }
      if (this.isOp("+")) { this.take(); return this.unary(); }
      return this.primary();
    },
    primary: function () {
      var t = this.peek(), x;
      if (t !== null && t.kind === "num") { this.take(); return parseFloat(t.text); }
      if (t !== null && t.kind === "name") {
        this.take();
        if (t.text === "pi" || t.text === "\u03c0") return Math.PI;
        if (Object.prototype.hasOwnProperty.call(FUNCTIONS, t.text)) {
          this.expect("(");
          x = this.expr(false);
          this.expect(")");
          if (t.text === "sqrt" && x < 0) {
            throw new AnswerError("could not read the answer " +
                                  "(the square root of a negative number)");
          }
          return FUNCTIONS[t.text](x);
        }
        throw new AnswerError("could not read the answer (unknown name '" + t.text + "')");
      }
      if (this.isOp("(")) {
        this.take();
        x = this.expr(false);
        this.expect(")");
        return x;
      }
      throw this.unexpected();
    },
    setItem: function () {
      var t = this.peek();
      if (this.isOp("(", "[")) {
        var close = this.take().text === "(" ? ")" : "]";
        var out = this.items(close, this.setItem);
        this.expect(close);
        return out;
      }
      if (this.isOp("-")) {
        this.take();
        t = this.take();
        if (t.kind !== "num") {
          throw new AnswerError("could not read the answer (unexpected '" + t.text + "')");
        }
        return -parseFloat(t.text);
      }
      if (t !== null && t.kind === "num") { this.take(); return parseFloat(t.text); }
      if (t !== null && (t.kind === "name" || t.kind === "str")) {
        this.take();
        return t.kind === "name" ? t.text : t.text.slice(1, -1);
      }
      throw this.unexpected();
    }
  };

  function oneGroup(toks) {
    var depth = 0;
    for (var k = 0; k < toks.length; k++) {
      var t = toks[k];
      if (t.kind === "op" && "[({".indexOf(t.text) >= 0) depth += 1;
      else if (t.kind === "op" && "])}".indexOf(t.text) >= 0) {
        depth -= 1;
        if (depth === 0) return k === toks.length - 1;
      }
    }
    return false;
  }

  function parse(text, kind) {
    var p = new Parser(text), out;
    if (!p.toks.length) throw new AnswerError("nothing to read");
    if (kind === "set") {
      var first = p.toks[0].text, last = p.toks[p.toks.length - 1].text;
      if (p.toks.length >= 2 && p.isOp("{", "[") && last === (first === "{" ? "}" : "]") &&
          oneGroup(p.toks)) {
        var close = p.take().text === "{" ? "}" : "]";
        out = p.items(close, p.setItem);
        p.expect(close);
      } else {
        out = p.items(null, p.setItem);
      }
      if (p.peek() !== null) throw p.unexpected();
      return out;
    }
    out = p.items(null, p.element);
    return out.length === 1 ? out[0] : out;
  }

  function shapeOf(x) {
    if (!Array.isArray(x)) return [];
    var shapes = x.map(shapeOf);
    shapes.forEach(function (s) {
      if (s.join("x") !== shapes[0].join("x")) {
        throw new AnswerError("the rows have different lengths");
      }
    });
    return [x.length].concat(shapes.length ? shapes[0] : []);
  }

  function flat(x) {
    return Array.isArray(x) ? x.reduce(function (a, y) { return a.concat(flat(y)); }, []) : [x];
  }

  function describe(kind, shape, items) {
    if (kind === "set") {
      return {pair: "pairs of whole numbers, like (1, 2), (2, 1)",
              integer: "whole numbers, like 1, 2, 3", name: "names, like a, b"}[items];
    }
    var whole = kind === "integer";
    if (shape.length === 0) return whole ? "a whole number" : "a number";
    if (shape.length === 1) {
      return "a list of " + shape[0] + " " + (whole ? "whole " : "") + "number" +
             (shape[0] === 1 ? "" : "s");
    }
    return "an array of shape " + shape.join("x") + (whole ? " of whole numbers" : "");
  }

  function isWhole(x) {
    return typeof x === "number" && isFinite(x) && x === Math.floor(x);
  }

  function itemKey(item) { return JSON.stringify(item); }

  function itemText(item) {
    if (Array.isArray(item)) return "(" + item.map(itemText).join(", ") + ")";
    return typeof item === "string" ? "'" + item + "'" : String(item);
  }

  function sortKey(item) {
    return (Array.isArray(item) ? item : [item]).map(function (x) {
      return typeof x === "string" ? [1, 0, x] : [0, x, ""];
    });
  }

  function compareKeys(a, b) {
    for (var i = 0; i < Math.min(a.length, b.length); i++) {
      for (var j = 0; j < 3; j++) {
        if (a[i][j] < b[i][j]) return -1;
        if (a[i][j] > b[i][j]) return 1;
      }
    }
    return a.length - b.length;
  }

  function sorted(items) {
    return items.slice().sort(function (a, b) { return compareKeys(sortKey(a), sortKey(b)); });
  }

  function setItems(data, value) {
    var out = [], seen = {};
    value.forEach(function (item) {
      var ok = {pair: Array.isArray(item) && item.length === 2 && item.every(isWhole),
                integer: isWhole(item), name: typeof item === "string"}[data.items];
      if (!ok) throw new AnswerError("an item is not of the kind asked for");
      if (!seen[itemKey(item)]) { seen[itemKey(item)] = true; out.push(item); }
    });
    return out;
  }

  function read(data, text) {
    var value = parse(text, data.kind);
    if (data.kind === "set") return setItems(data, value);
    var shape = shapeOf(value), values = flat(value);
    var oneNumber = data.shape.length === 0 && values.length === 1;
    if (shape.join("x") !== data.shape.join("x") && !oneNumber) {
      throw new AnswerError("got " + describe("float", shape));
    }
    if (!values.every(isFinite)) throw new AnswerError("an entry is not a finite number");
    if (data.kind === "integer" && !values.every(function (x) { return x === Math.floor(x); })) {
      throw new AnswerError("an entry is not a whole number");
    }
    return values;
  }

  function keys(items) {
    var out = {};
    items.forEach(function (x) { out[itemKey(x)] = true; });
    return out;
  }

  function holds(data, t, a) {
    var i, j;
    if (t.test === "same_set" || t.test === "has_extra" || t.test === "has_missing") {
      var given = keys(a), ref = keys(t.items);
      var extra = a.some(function (x) { return !ref[itemKey(x)]; });
      var missing = t.items.some(function (x) { return !given[itemKey(x)]; });
      if (t.test === "same_set") return !extra && !missing;
      return t.test === "has_extra" ? extra : missing;
    }
    if (t.test === "not_symmetric") {
      var n = data.shape[0];
      if (data.shape.length !== 2 || data.shape[1] !== n) return false;
      for (i = 0; i < n; i++) {
        for (j = 0; j < n; j++) {
          var d = Math.abs(a[i * n + j] - a[j * n + i]);
          if (d > t.atol + t.rtol * Math.abs(a[j * n + i])) return true;
        }
      }
      return false;
    }
    var x = t.part === null ? a : t.part.map(function (k) { return a[k]; });
    if (t.test === "close") {
      return x.every(function (p, k) {
        return Math.abs(p - t.value[k]) <= t.atol + t.rtol * Math.abs(t.value[k]);
      });
    }
    if (t.test === "norm") {
      var s = 0.0;
      x.forEach(function (p) { s += p * p; });
      return Math.abs(Math.sqrt(s) - t.value) <= t.atol + t.rtol * Math.abs(t.value);
    }
    if (t.test === "between") {
      return x.every(function (p) {
        return (t.lo === null || p >= t.lo) && (t.hi === null || p <= t.hi);
      });
    }
    throw new Error("unknown test " + t.test);
  }

  function message(rule, a) {
    var text = rule.message;
    [["{extra}", "has_extra"], ["{missing}", "has_missing"]].forEach(function (nk) {
      if (text.indexOf(nk[0]) < 0) return;
      var t = rule.tests.filter(function (u) { return u.test === nk[1]; })[0];
      var given = keys(a), ref = keys(t.items);
      var pool = nk[1] === "has_extra"
        ? a.filter(function (x) { return !ref[itemKey(x)]; })
        : t.items.filter(function (x) { return !given[itemKey(x)]; });
      text = text.split(nk[0]).join(sorted(pool).slice(0, 3).map(itemText).join(", "));
    });
    return text;
  }

  function evaluate(data, text) {
    var a;
    try {
      a = read(data, text);
    } catch (err) {
      if (!(err instanceof AnswerError)) throw err;
      return {right: false,
              line: WRONG + err.message + "; expected " +
                    describe(data.kind, data.shape, data.items) + "."};
    }
    for (var r = 0; r < data.rules.length; r++) {
      var rule = data.rules[r];
      if (rule.tests.every(function (t) { return holds(data, t, a); })) {
        return {right: rule.right, line: (rule.right ? RIGHT : WRONG) + message(rule, a)};
      }
    }
    throw new Error("the last rule of " + data.name + " has a test");
  }

  function wire(box) {
    var data = JSON.parse(box.querySelector("script.rbd-ex-data").textContent);
    var input = box.querySelector("input.rbd-ex-input");
    var result = box.querySelector(".rbd-ex-result");
    function check() {
      var v = evaluate(data, input.value);
      result.textContent = v.line;
      result.classList.toggle("rbd-ex-right", v.right);
      result.classList.toggle("rbd-ex-wrong", !v.right);
    }
    box.querySelector("button.rbd-ex-check").addEventListener("click", check);
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); check(); }
    });
  }

  window.rbdExercises = {evaluate: evaluate, parse: parse};
  function start() { document.querySelectorAll("div.rbd-exercise").forEach(wire); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
