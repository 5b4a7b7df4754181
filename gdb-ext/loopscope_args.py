# loopscope_args.py - the one argument parser of the loopscope commands.
#
# Every command (structure, info loops, loop-next, loop-finish, break-loop,
# the MI commands) parses its argument here, and nothing the user typed
# reaches GDB before it has passed this module's guard:
#
#   - at most MAX_ARG characters, and no control characters;
#   - options first (-json, -exit, -depth D, ...: exact names, unambiguous
#     prefixes, or --name), "--" ends them; an unknown option is an error;
#   - then the location, checked with GDB's own quoting rules.
#
# Why the quoting check: GDB 13's gdb.decode_line runs the linespec lexer
# outside its exception handler, so a location the lexer refuses ("unmatched
# quote") throws a C++ exception through CPython's frames and corrupts GDB's
# memory (a crash at the next command or stop).  linespec_end() below is the
# lexer's end-of-linespec scan (gdb/linespec.c linespec_lex_to_end, with
# find_toplevel_char from gdb/cp-support.c), ported as it is: it finds where
# the location ends (before `if`, `thread`, `task`, `-force-condition` or a
# comma), and refuses exactly what the lexer would throw on.  Where the
# lexer's choice depends on the current language (C++ operator names), both
# choices are tried and the location is refused if either throws: refusing
# too much is safe, too little is not.  A location starting with "*" is an
# expression: it never goes to decode_line (the expression would be
# evaluated outside the handler too), the caller evaluates it with
# gdb.parse_and_eval.
#
# Completion: options where an option may come, GDB's own location (or
# symbol) completion elsewhere.
import re

import gdb

MAX_ARG = 1024

_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"
_QUOTES = "'\""
# gdb/linespec.c linespec_keywords (GDB 13)
_KEYWORDS = ("if", "thread", "task", "-force-condition")
_IF, _FORCE = 0, 3


class ArgumentError(gdb.GdbError):
    """A usage error, shown without a traceback.  The message is already
    safe to print (see escape())."""


def escape(text):
    """TEXT as GDB prints a string it did not make: a byte that is not UTF-8
    (a surrogate escape) or a control character as a backslash escape
    (\\n, \\t, \\ooo), so that a name from DWARF or a path cannot move the
    cursor, and every byte stays visible."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = str(text)
    if text.isprintable() and text.isascii():
        return text
    out = []
    for c in text:
        o = ord(c)
        if 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
            out.append("\\%03o" % (o - 0xDC00))
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append("\\%03o" % o)
        elif 0x80 <= o < 0xA0 or 0xD800 <= o <= 0xDFFF:  # C1 controls, other lone surrogates
            out.extend("\\%03o" % b for b in c.encode("utf-8", "surrogatepass"))
        else:
            out.append(c)
    return "".join(out)


# ---- GDB's linespec lexer (GDB 13), its end-of-location scan -----------------


def _keyword_at(s, i):
    """gdb/linespec.c linespec_lexer_lex_keyword: the keyword at S[i:], or None."""
    for k, kw in enumerate(_KEYWORDS):
        if not s.startswith(kw, i):
            continue
        after = i + len(kw)
        if k == _FORCE and after == len(s):
            return kw
        if after >= len(s) or s[after] not in _SPACE:
            continue
        p = after
        while p < len(s) and s[p] in _SPACE:
            p += 1
        if k == _FORCE:
            for kw2 in _KEYWORDS:
                e = p + len(kw2)
                if s.startswith(kw2, p) and e < len(s) and s[e] in _SPACE:
                    return kw
        elif k != _IF:  # "thread" or "task" followed by a keyword is not one
            for kw2 in _KEYWORDS:
                e = p + len(kw2)
                if s.startswith(kw2, p) and e < len(s) and s[e] in _SPACE:
                    return None
        return kw
    return None


def _find_toplevel_char(s, i, c):
    """gdb/cp-support.c find_toplevel_char: the index of C in S[i:] outside
    quotes and ()/<> nesting, or None."""
    quoted = None
    depth = 0
    n = len(s)
    while i < n:
        ch = s[i]
        if quoted:
            if ch == quoted:
                quoted = None
            elif ch == "\\" and i + 1 < n:
                i += 1
        elif ch == c and depth == 0:
            return i
        elif ch in _QUOTES:
            quoted = ch
        elif ch in "(<":
            depth += 1
        elif ch in ")>" and depth > 0:
            depth -= 1
        elif ch == "o" and depth == 0 and s.startswith("operator", i):
            i += 8
            if i < n and s[i] == c:
                return i
            while i < n and s[i] in _SPACE:
                i += 1
                if i < n and s[i] == c:
                    return i
            if i >= n:
                return None
            if s[i] in "<>" and i + 1 < n and s[i + 1] == s[i]:
                i += 1
                if s[i] == c:
                    return i
        i += 1
    return None


def _skip_quote_char(s, i, q):
    """gdb/linespec.c skip_quote_char: the closing quote Q of a quoted
    string starting at S[i:] (the last one before a ':'), or None."""
    p = last = _find_toplevel_char(s, i, q)
    while p is not None and p < len(s) and s[p] != ":":
        p = _find_toplevel_char(s, p, q)
        if p is not None:
            last = p
            p += 1
    return last


def _parameter_list_end(s, i):
    """gdb/linespec.c find_parameter_list_end (S[i] is '(' or '<')."""
    start = s[i]
    end = ")" if start == "(" else ">"
    depth = 0
    while i < len(s):
        if s[i] == start:
            depth += 1
        elif s[i] == end:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


class _Unmatched(Exception):
    pass


def _lex_string(s, i, cplus, operator_comma):
    """gdb/linespec.c linespec_lexer_lex_string: the end of the string token
    at S[i]; raises _Unmatched where GDB says "unmatched quote"."""
    n = len(s)
    if s[i] in _QUOTES:
        end = _skip_quote_char(s, i + 1, s[i])
        if end is None:
            raise _Unmatched()
        return end + 1
    start = i
    while True:
        if i < n and s[i] in _SPACE:
            p = i
            while p < n and s[p] in _SPACE:
                p += 1
            if _keyword_at(s, p):
                return i
            i = p
        if i >= n:
            return i
        ch = s[i]
        if ch == ":":
            if i + 1 < n and s[i + 1] == ":":
                i += 1
            elif i - start > 4 and s[i - 4:i] == "[abi":
                pass
            elif i - start != 1 or not (i + 1 < n and s[i + 1] == "/"):
                return i
        elif ch in "<(":
            if ch == "<" and cplus and i - start >= 8:
                op = i
                while op > start and s[op - 1] in _SPACE:
                    op -= 1
                if op - start >= 8 and s[op - 8:op] == "operator" and \
                        (op - 8 == start or not (s[op - 9].isascii() and (s[op - 9].isalnum() or s[op - 9] == "_"))):
                    i += 1
                    if i < n and s[i] == "<":
                        i += 1
                    continue
            i = _parameter_list_end(s, i)
            if i >= n:
                return i
            continue
        elif ch == ",":
            # (strstr from the token's start: "operator" anywhere after it)
            if cplus and i - start > 8 and "operator" in s[start:] and operator_comma:
                i += 1
                continue
            return i
        i += 1


def _lex_number(s, i):
    """gdb/linespec.c linespec_lexer_lex_number: the end of a number at S[i],
    or None if S[i:] is not one."""
    n = len(s)
    j = i
    if j < n and s[j] in "+-":
        j += 1
    while j < n and s[j] in _DIGITS:
        j += 1
    if j < n and s[j] not in _SPACE and s[j] not in ",:" and s[j] not in _QUOTES:
        return None
    return j


def _lex_to_end(s, cplus, operator_comma):
    """gdb/linespec.c linespec_lex_to_end: where the linespec in S ends."""
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _SPACE:
            i += 1
        if i >= n or _keyword_at(s, i):
            return i
        ch = s[i]
        if ch == ",":
            return i
        if ch in "+-" or ch in _DIGITS:
            j = _lex_number(s, i)
            i = j if j is not None else _lex_string(s, i, cplus, operator_comma)
        elif ch == ":":
            i = _lex_string(s, i, cplus, operator_comma) if i + 1 < n and s[i + 1] == ":" else i + 1
        else:
            i = _lex_string(s, i, cplus, operator_comma)


def linespec_end(text):
    """Where the linespec TEXT ends (before a keyword or a comma), as GDB 13's
    lexer sees it; None if the lexer would throw (an unmatched quote) under
    any of the language-dependent readings."""
    ends = set()
    for cplus, operator_comma in ((False, False), (True, False), (True, True)):
        try:
            ends.add(_lex_to_end(text, cplus, operator_comma))
        except _Unmatched:
            return None
    return min(ends)


# ---- the parser ------------------------------------------------------------------


class Parsed:
    """What parse() found: options (name -> True or value), positional words,
    the location, and break-loop's `thread N`, `task N`, `-force-condition`
    and `if COND`."""

    def __init__(self):
        self.options = {}
        self.words = []
        self.location = ""
        self.thread = None
        self.task = None
        self.force_condition = False
        self.condition = None

    def has(self, name):
        return name in self.options

    def get(self, name, default=None):
        return self.options.get(name, default)


class Spec:
    """What one command takes.

    OPTIONS: {"-name": None (a flag) or a converter (int) for its value}.
    LOCATION: None (no location), "location" (a linespec or *EXPR), or
    "function" (a function name).  WORDS: positional words allowed (for
    loop-next's N) when there is no location.  KEYWORDS: `thread N`,
    `if COND` and the like after the location (break-loop)."""

    def __init__(self, command, options=None, location=None, words=0, keywords=False):
        self.command = command
        self.options = options or {}
        self.location = location
        self.words = words
        self.keywords = keywords

    def usage(self):
        parts = [self.command]
        for name, conv in self.options.items():
            parts.append("[%s%s]" % (name, " " + name[1:].upper()[:1] if conv else ""))
        if self.location == "location":
            parts.append("LOCATION")
        elif self.location == "function":
            parts.append("[FUNCTION]")
        return " ".join(parts)


def _error(spec, message):
    raise ArgumentError("%s: %s" % (spec.command, message))


def guard(spec, arg, what=None):
    """The checks made before anything else: length and control characters."""
    what = what or ("location" if spec.location == "location" else "argument")
    if len(arg) > MAX_ARG:
        _error(spec, "the %s is %d characters long (at most %d)" % (what, len(arg), MAX_ARG))
    bad = [c for c in arg if (ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F]
    if bad:
        _error(spec, "control characters in the %s (%s)" % (what, escape("".join(sorted(set(bad))))))


def _option_name(spec, word):
    name = "-" + word.lstrip("-")
    if name in spec.options:
        return name
    matches = [o for o in spec.options if o.startswith(name)] if len(name) > 1 else []
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(spec.options) if spec.options else "none"
    if len(matches) > 1:
        _error(spec, "ambiguous option %s (%s)" % (escape(word), ", ".join(matches)))
    _error(spec, "unknown option %s (options: %s)" % (escape(word), known))


def _is_option(word):
    return word.startswith("-") and len(word) > 1 and not word[1:2] in _DIGITS


def _next_word(arg, i):
    """(word, index after it) of the blank-separated word at ARG[i:]."""
    while i < len(arg) and arg[i] in _SPACE:
        i += 1
    j = i
    while j < len(arg) and arg[j] not in _SPACE:
        j += 1
    return arg[i:j], j


def parse(spec, arg):
    """Parse ARG (a command's argument string) by SPEC; ArgumentError on
    anything wrong, before any of it reaches GDB."""
    arg = arg or ""
    guard(spec, arg)
    out = Parsed()
    i = 0
    while True:
        word, j = _next_word(arg, i)
        if not word or not _is_option(word):
            break
        i = j
        if word == "--":
            break
        name = _option_name(spec, word)
        conv = spec.options[name]
        if conv is None:
            out.options[name] = True
            continue
        value, i = _next_word(arg, i)
        if not value:
            _error(spec, "%s needs a value" % name)
        try:
            out.options[name] = conv(value)
        except ValueError:
            _error(spec, "%s: %s is not a number" % (name, escape(value)))
    rest = arg[i:].strip(_SPACE)
    if spec.location is None:
        words = rest.split()
        if len(words) > spec.words:
            _error(spec, "unexpected argument %s (usage: %s)" % (escape(rest), spec.usage()))
        out.words = words
        return out
    location, tail = split_location(spec, rest)
    out.location = location
    if tail:
        if not spec.keywords:
            _error(spec, "junk after the location: %s" % escape(tail))
        _parse_keywords(spec, tail, out)
    return out


# ---- names GDB 13 can look up without aborting ----------------------------------
#
# GDB 13's C++ symbol lookup (break, gdb.decode_line, gdb.lookup_symbol
# alike) ends the session with an internal error on names its C++ name
# splitter gets wrong: ::0, ::a!b, a>::x, a)b::x, operator::, "::a -" and
# more (the quote fuzz finds them).  So a function name goes to GDB only if
# it is a C++ name by the grammar below (qualified names, templates,
# parameter lists, operators, destructors, ABI tags): what users type,
# and what GDB prints.  Anything else is refused with a message.

_IDENT_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_ABI_RE = re.compile(r"\[abi:[A-Za-z0-9_]+\]")
_OPERATORS = ("->*", "->", "<<=", ">>=", "<=>", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
              "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "()", "[]", "+", "-", "*", "/",
              "%", "^", "&", "|", "~", "!", "=", "<", ">", ",")
_INNER_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$:<>()[]*&,. -+")


def _balanced(s, i, open_, close):
    """The index after the bracket group that opens at S[i], its content made
    of harmless characters with (), <> and [] balanced inside; or None."""
    stack = []
    pairs = {"(": ")", "<": ">", "[": "]"}
    j = i
    while j < len(s):
        c = s[j]
        if c not in _INNER_OK:
            return None
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")>]":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return j + 1
        j += 1
    return None


def _skip_blanks(s, i):
    while i < len(s) and s[i] == " ":
        i += 1
    return i


def _operator(s, i):
    """After "operator" at S[i-8:i]: the end of the operator's name, or None."""
    j = _skip_blanks(s, i)
    if s.startswith('""', j):  # a literal operator: operator"" _km
        m = _IDENT_RE.match(s, _skip_blanks(s, j + 2))
        return m.end() if m else None
    for word in ("new", "delete"):
        if s.startswith(word, j) and not (j + len(word) < len(s) and (s[j + len(word)].isalnum() or s[j + len(word)] == "_")):
            j += len(word)
            return j + 2 if s.startswith("[]", j) else j
    for op in _OPERATORS:
        if s.startswith(op, j):
            return j + len(op)
    if j == i:  # a conversion operator needs its blank: operator bool
        return None
    m = _IDENT_RE.match(s, j)  # operator bool, operator char const*
    if not m:
        return None
    j = m.end()
    while True:
        if s.startswith("::", j):
            m = _IDENT_RE.match(s, j + 2)
            if not m:
                return None
            j = m.end()
        elif j < len(s) and s[j] == "<":
            j = _balanced(s, j, "<", ">")
            if j is None:
                return None
        elif j < len(s) and s[j] in "*&":
            j += 1
        elif s.startswith(" const", j) or s.startswith(" volatile", j):
            j += 6 if s.startswith(" const", j) else 9
        elif s.startswith(" *", j) or s.startswith(" &", j):
            j += 1
        else:
            return j


def _component(s, i):
    """One part of a qualified name at S[i]: identifier, ~identifier or
    operator, with template arguments and ABI tags; its end, or None."""
    if i < len(s) and s[i] == "~":
        i += 1
    m = _IDENT_RE.match(s, i)
    if not m or (m.group(0).startswith("operator") and m.group(0) != "operator"):
        return None  # (GDB reads "operatorif" as an operator's name, and aborts)
    j = m.end()
    if m.group(0) == "operator":
        j = _operator(s, j)
        if j is None:
            return None
    while True:
        a = _ABI_RE.match(s, j)
        if a:
            j = a.end()
        elif j < len(s) and s[j] == "<" and m.group(0) != "operator":
            j = _balanced(s, j, "<", ">")
            if j is None:
                return None
        else:
            return j


def c_name_end(s, i=0):
    """The end of the C++ (or C) function name at S[i]: [::]part(::part)*
    [(parameters)] [const] [&|&&] [ABI tags]; None if there is none."""
    leading = s.startswith("::", i)
    if leading:
        i += 2
        if s.startswith("operator", i) or s.startswith("~", i):
            return None  # ::operator new, ::~Acc abort GDB 13
    while True:
        j = _component(s, i)
        if j is None or (leading and "[abi:" in s[i:j]):
            return None  # (::h[abi:cxx11] aborts it too)
        leading = False
        if s.startswith("::", j):
            i = j + 2
            continue
        break
    if j < len(s) and s[j] == "(":
        j = _balanced(s, j, "(", ")")
        if j is None:
            return None
        for q in (" const", " volatile", " &&", " &", "&&", "&"):
            if s.startswith(q, j):
                j += len(q)
        while _ABI_RE.match(s, j):
            j = _ABI_RE.match(s, j).end()
    return j


# GCC's clones of a C function, as its symbol table names them: f.cold (the
# unlikely part, in .text.unlikely), f.part.0, f.constprop.0.isra.0.  GDB
# knows them as minimal symbols (a C++ clone's name is demangled, "f(int)
# [clone .cold]", and is not one of these).  In an expression such a name
# needs quotes ('f.cold'+0x10), or GDB reads a member access.
_CLONE_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\.[0-9]+)*)+")


def is_clone_name(name):
    """Whether NAME (quotes allowed) is the name of a GCC clone (f.cold)."""
    return bool(_CLONE_RE.fullmatch(_unquote(name)))


def is_function_name(name):
    """Whether NAME (one pair of enclosing quotes allowed) is a function name
    GDB 13 can look up safely."""
    name = name.strip(_SPACE)
    if len(name) >= 2 and name[0] in _QUOTES and name[-1] == name[0]:
        name = name[1:-1]
    return bool(name) and (c_name_end(name) == len(name) or bool(_CLONE_RE.fullmatch(name)))


_LINE_RE = re.compile(r"^[+-]?[0-9]+$")
_OFFSET_RE = re.compile(r"^(.*?)[" + _SPACE + r"]*[+-][" + _SPACE + r"]*(0[xX][0-9a-fA-F]+|[0-9]+)$")


def offset_expression(loc):
    """Whether LOC is FUNCTION+OFFSET (ktime_get+26, an oops' f+0x4de): an
    expression, evaluated as one (never a linespec: no such function)."""
    m = _OFFSET_RE.match(loc)
    return bool(m) and is_function_name(m.group(1))


def as_expression(loc):
    """FUNCTION+OFFSET (offset_expression) as GDB's expression parser must
    see it: a clone's name quoted (ext4_setup_system_zone.cold+0x10)."""
    m = _OFFSET_RE.match(loc)
    if m and is_clone_name(m.group(1)) and m.group(1)[:1] not in _QUOTES:
        return "'%s'%s" % (m.group(1), loc[m.end(1):])
    return loc


def _unquote(part):
    part = part.strip(_SPACE)
    if len(part) >= 2 and part[0] in _QUOTES and part[-1] == part[0]:
        return part[1:-1]
    return part


def _file_split(loc):
    """(FILE, REST) of FILE:REST (the first ':' that is not part of "::",
    outside quotes and brackets), or (None, LOC)."""
    quoted, depth, i = None, 0, 0
    while i < len(loc):
        c = loc[i]
        if quoted:
            if c == quoted:
                quoted = None
        elif c in _QUOTES:
            quoted = c
        elif c in "(<[":
            depth += 1
        elif c in ")>]" and depth:
            depth -= 1
        elif c == ":" and depth == 0:
            if loc.startswith("::", i):
                i += 2
                continue
            return loc[:i], loc[i + 1:]
        i += 1
    return None, loc


def linespec_shape_ok(loc):
    """Whether linespec LOC is LINE, FILE:LINE, FUNCTION, FILE:FUNCTION or
    FUNCTION:LABEL, with FUNCTION a name is_function_name() takes (quotes
    around a part allowed): what GDB can resolve without aborting."""
    if _LINE_RE.match(_unquote(loc)) or offset_expression(loc):
        return True
    file, rest = _file_split(loc)
    if file is not None:
        f = _unquote(file)
        # GDB looks a FILE it finds no file for up as a function (for
        # FUNCTION:LABEL): no "::" or brackets there unless it is a name.
        if not f or any(c in f for c in _QUOTES) or (
                ("::" in f or any(c in f for c in "()<>[]")) and not is_function_name(file)):
            return False
        if _LINE_RE.match(_unquote(rest)):
            return True
        if is_function_name(rest):
            return True
        # FUNCTION:LABEL
        if is_function_name(file) and _IDENT_RE.fullmatch(_unquote(rest)):
            return True
        return False
    return is_function_name(loc)


def split_location(spec, text):
    """(location, what follows it) of TEXT, checked by GDB's lexer rules."""
    if not text:
        return "", ""
    if spec.location == "function":
        # A name: looked up, and lexed as a linespec only if GDB's lexer
        # takes all of it (see the callers); an open quote is a typo.
        if text[0] in _QUOTES and linespec_end(text) is None:
            _error(spec, "unmatched quote in the function name: %s" % escape(text))
        if not text.startswith("*") and not is_function_name(text):
            _error(spec, "not a function name: %s" % escape(text))
        return text, ""
    if text.startswith("*"):
        end = _expression_end(text)
        return text[:end].rstrip(_SPACE), text[end:].strip(_SPACE)
    end = linespec_end(text)
    if end is None:
        _error(spec, "unmatched quote in the location (%s quoting rules): %s" % (
            "GDB's", escape(text)))
    location = text[:end].rstrip(_SPACE)
    if not location:
        _error(spec, "no location before %s" % escape(text[end:].strip(_SPACE)))
    if not re.match(r"^(0[xX][0-9a-fA-F]+)$", location) and not linespec_shape_ok(location):
        _error(spec, "not a location (LINE, FILE:LINE, FUNCTION, FILE:FUNCTION or *ADDRESS): %s" %
               escape(location))
    return location, text[end:].strip(_SPACE)


def _expression_end(text):
    """Where the *EXPRESSION of a location ends: at the first keyword that
    follows a blank outside quotes and brackets (as GDB's expression lexer
    stops at them in a breakpoint location)."""
    quoted, depth = None, 0
    for i, ch in enumerate(text):
        if quoted:
            if ch == quoted:
                quoted = None
            elif ch == "\\":
                continue
        elif ch in _QUOTES:
            quoted = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
        elif depth == 0 and ch in _SPACE and _keyword_at(text, i + 1):
            return i
    return len(text)


def _parse_keywords(spec, tail, out):
    """`thread N`, `task N`, `-force-condition` and `if COND` (COND is the rest)."""
    i = 0
    while i < len(tail):
        word, j = _next_word(tail, i)
        if not word:
            break
        if word == "if":
            cond = tail[j:].strip(_SPACE)
            if not cond:
                _error(spec, "`if` needs a condition")
            out.condition = cond
            return
        if word in ("thread", "task"):
            value, j = _next_word(tail, j)
            try:
                number = int(value, 0)
            except ValueError:
                _error(spec, "%s needs a number (got %s)" % (word, escape(value) or "nothing"))
            if word == "thread":
                out.thread = number
            else:
                out.task = number
        elif word == "-force-condition":
            out.force_condition = True
        else:
            _error(spec, "junk after the location: %s" % escape(tail[i:]))
        i = j


# ---- completion ------------------------------------------------------------------


def complete(spec, text, word):
    """What gdb.Command.complete returns for SPEC: option names while the
    word being completed starts with '-' and only options precede it, else
    GDB's location (or symbol) completion, else nothing.  (GDB splits words
    at '-': WORD may be what follows it; the completions complete WORD.)"""
    tokens = text.split()
    token = tokens[-1] if tokens and not text[-1:].isspace() else ""
    before = tokens[:-1] if token else tokens
    options_so_far = all(_is_option(w) for w in before) and "--" not in before
    if options_so_far and token.startswith("-"):
        if word is None:
            return None
        cut = len(token) - len(word)
        return sorted(o[cut:] for o in spec.options if o.startswith(token))
    if spec.location in ("location", "function"):
        if before:  # after options: GDB's completer on the location alone
            if word is None:
                return None  # (the default word breaks)
            return _location_completions(text.lstrip(_SPACE), before, word)
        return gdb.COMPLETE_LOCATION if spec.location == "location" else gdb.COMPLETE_SYMBOL
    if options_so_far and not token and word is not None:
        return sorted(spec.options)
    return gdb.COMPLETE_NONE


def _location_completions(text, options, word):
    """GDB's own completions of the location that follows OPTIONS in TEXT
    (the `complete` command on `break LOCATION`), as completions of WORD."""
    rest = text
    for opt in options:  # the options as typed, then the blanks after them
        rest = rest[rest.index(opt) + len(opt):].lstrip(_SPACE)
    if len(rest) > MAX_ARG:
        return []
    try:
        out = gdb.execute("complete break " + rest, to_string=True)
    except (gdb.error, UnicodeDecodeError):
        return []
    keep = len(rest) - len(word)
    got = []
    for line in out.splitlines():
        if line.startswith("break ") and len(line) - 6 >= keep:
            got.append(line[6 + keep:])
    return got
