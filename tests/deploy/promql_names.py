"""Metric names in a PromQL expression (and a Grafana query with its variables), without a PromQL
library: test_monitoring.py checks that every name the rules and the dashboard use is exported.
split_args and PromQLError are what it also needs of the parser."""
import re


KEYWORDS = {"and", "or", "unless", "atan2", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan"}
LABEL_LIST = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile", "limitk", "limit_ratio"}
IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:[a-zA-Z]+\d*)*")
GRAFANA_VAR = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\[\[[^\]]*\]\]")


class PromQLError(ValueError):
    pass


def _skip_string(s, i):
    quote = s[i]
    i += 1
    while i < len(s):
        if s[i] == "\\" and quote != "`":
            i += 2
            continue
        if s[i] == quote:
            return i + 1
        i += 1
    raise PromQLError(f"unterminated string at {i}")


def _matching(s, i, open_char, close_char):
    """Index just after the bracket closing the one at s[i], strings skipped."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c in "\"'`":
            i = _skip_string(s, i)
            continue
        if c == open_char:
            depth += 1
        elif c == close_char:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise PromQLError(f"unbalanced {open_char!r}")


def split_args(inner):
    """Top-level comma-separated arguments of a call's inside."""
    args, depth, start, i = [], 0, 0, 0
    while i < len(inner):
        c = inner[i]
        if c in "\"'`":
            i = _skip_string(inner, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(inner[start:i])
            start = i + 1
        i += 1
    args.append(inner[start:])
    return [a for a in (x.strip() for x in args) if a]


def _next_nonspace(s, i):
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def metric_names(expr):
    """Metric names a PromQL expression (or a Grafana template query) selects."""
    s = GRAFANA_VAR.sub(lambda m: "1m" if m.group(0).startswith("$__") else "x", expr)
    names = set()
    i = depth = 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c in "()":
            depth += 1 if c == "(" else -1
            if depth < 0:
                raise PromQLError(f"unbalanced ')' at {i}")
            i += 1
        elif c == "#":  # comment to the end of the line
            while i < len(s) and s[i] != "\n":
                i += 1
        elif c in "\"'`":
            i = _skip_string(s, i)
        elif c == "{":  # label matchers; a name may hide in __name__="..."
            end = _matching(s, i, "{", "}")
            body = s[i + 1:end - 1]
            for op, name in re.findall(r'__name__\s*(=~|!~|!=|=)\s*"([^"]*)"', body):
                if op != "=":
                    raise PromQLError(f"__name__{op}\"{name}\" cannot be checked")
                names.add(name)
            i = end
        elif c == "[":  # range or subquery: durations only
            i = _matching(s, i, "[", "]")
        elif c.isdigit() or (c == "." and i + 1 < len(s) and s[i + 1].isdigit()):
            i = NUMBER.match(s, i).end()
        elif IDENT.match(s, i):
            word = IDENT.match(s, i).group(0)
            i += len(word)
            lower = word.lower()
            j = _next_nonspace(s, i)
            nxt = s[j] if j < len(s) else ""
            if lower in LABEL_LIST:
                if nxt == "(":
                    i = _matching(s, j, "(", ")")  # label names, not metrics
            elif lower == "offset":
                j = _next_nonspace(s, i)
                if j < len(s) and s[j] == "-":
                    j += 1
                m = NUMBER.match(s, j)
                i = m.end() if m else i
            elif lower in KEYWORDS:
                pass
            elif nxt == "(" and word == "label_values":  # Grafana: label_values([metric,] label)
                end = _matching(s, j, "(", ")")
                args = split_args(s[j + 1:end - 1])
                if len(args) == 2:
                    names |= metric_names(args[0])
                i = end
            elif nxt == "(":
                pass  # a function or an aggregation; its arguments are read next
            elif lower in AGGREGATIONS and IDENT.match(s, j) and IDENT.match(s, j).group(0).lower() in ("by", "without"):
                pass  # sum by (...) (...)
            else:
                names.add(word)
        else:
            i += 1
    if depth:
        raise PromQLError("unbalanced '('")
    return names
