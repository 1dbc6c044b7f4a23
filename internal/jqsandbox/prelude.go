package jqsandbox

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/itchyny/gojq"
)

// prelude is compiled in front of every query. Its definitions shadow the
// builtins that could allocate or recurse without bound in one native call,
// putting a guard (guard.go) in front of each. It relies on two properties
// of gojq:
//
//   - a definition is resolved when it is compiled, so the _sbx_orig_*
//     aliases, defined first, still reach the native builtins, while user
//     code (compiled after the prelude) and the later prelude definitions
//     reach the guarded versions;
//   - string interpolation, @formats and the update operators call tostring,
//     _tohtml, _modify... through the same name resolution, so they are
//     guarded too. Binary operators and .[x] do not: rewrite.go turns them
//     into calls of the _sbx_op_* functions below (or of the Go
//     comparisons in guard.go).
//
// jq-defined builtins reach natives from the builtin scope, which the
// prelude cannot shadow; those that pass user-controlled values to a risky
// native are redefined here from gojq's builtin.jq, on top of the guarded
// versions. Native argument order is kept: gojq evaluates the last argument
// of a native call in the outermost loop, so the guarded versions bind their
// arguments last to first.
//
// gojq's _modify (behind |= and the update-assignment operators) deletes
// the paths whose update is empty, walking the whole value recursively; the
// guarded version checks the value then, once (first(f, ...) keeps the
// native semantics: only the first output of the update counts).
//
// _match, behind every regex builtin, calls _sbx_match (regex.go): the
// guard, then test answered from kept expressions, or gojq's own _match.
//
// gojq has no keys_unsorted, and its to_entries lists keys sorted; jq 1.6
// lists them in insertion order. The prelude defines both on the key order
// results are printed with (order.go).
//
// User queries cannot name anything starting with _sbx (rewrite.go).
const prelude = `
def _sbx_orig_tostring: tostring;
def _sbx_orig_tojson: tojson;
def _sbx_orig_tohtml: _tohtml;
def _sbx_orig_touri: _touri;
def _sbx_orig_tourid: _tourid;
def _sbx_orig_tocsv: _tocsv;
def _sbx_orig_totsv: _totsv;
def _sbx_orig_tosh: _tosh;
def _sbx_orig_tobase64: _tobase64;
def _sbx_orig_tobase64d: _tobase64d;
def _sbx_orig_format($f): format($f);
def _sbx_orig_add: add;
def _sbx_orig_join($x): join($x);
def _sbx_orig_flatten: flatten;
def _sbx_orig_flatten($d): flatten($d);
def _sbx_orig_transpose: transpose;
def _sbx_orig_explode: explode;
def _sbx_orig_split($s): split($s);
def _sbx_orig_indices($i): indices($i);
def _sbx_orig_index($i): index($i);
def _sbx_orig_rindex($i): rindex($i);
def _sbx_orig_contains($b): contains($b);
def _sbx_orig_inside($b): inside($b);
def _sbx_orig_sort: sort;
def _sbx_orig_unique: unique;
def _sbx_orig_min: min;
def _sbx_orig_max: max;
def _sbx_orig_sort_by($k): ` + sortByDef + `;
def _sbx_orig_group_by($k): ` + groupByDef + `;
def _sbx_orig_unique_by($k): _unique_by($k);
def _sbx_orig_min_by($k): _min_by($k);
def _sbx_orig_max_by($k): _max_by($k);
def _sbx_orig_bsearch($t): bsearch($t);
def _sbx_orig_tonumber: tonumber;
def _sbx_orig_setpath($p; $v): setpath($p; $v);
def _sbx_orig_getpath($p): getpath($p);
def _sbx_orig_delpaths($ps): delpaths($ps);
def _sbx_orig_assign(p; $x): _assign(p; $x);
def _sbx_orig_modify(p; f): _modify(p; f);
def _sbx_orig_strftime($f): strftime($f);
def _sbx_orig_strflocaltime($f): strflocaltime($f);

def _sbx_op_add(l; r): r as $r | l as $l | _sbx_chk_add($l; $r) | $l + $r;
def _sbx_op_sub(l; r): r as $r | l as $l | _sbx_chk_sub($l; $r) | $l - $r;
def _sbx_op_mul(l; r): r as $r | l as $l | _sbx_chk_mul($l; $r) | $l * $r;
def _sbx_op_div(l; r): r as $r | l as $l | _sbx_chk_div($l; $r) | $l / $r;

def _sbx_assign(p; $x):
  (path(p) as $q | _sbx_chk_setpath($q) | empty), _sbx_orig_assign(p; $x);
def _sbx_modify(p; f):
  (path(p) as $q | _sbx_chk_setpath($q) | empty),
  (. as $root | _sbx_orig_modify(p; first(f, ($root | _sbx_chk_delete | empty))));
def _sbx_update_add(l; r): r as $x | _sbx_modify(l; _sbx_op_add(.; $x));
def _sbx_update_sub(l; r): r as $x | _sbx_modify(l; _sbx_op_sub(.; $x));
def _sbx_update_mul(l; r): r as $x | _sbx_modify(l; _sbx_op_mul(.; $x));
def _sbx_update_div(l; r): r as $x | _sbx_modify(l; _sbx_op_div(.; $x));
def _sbx_update_mod(l; r): r as $x | _sbx_modify(l; . % $x);
def _sbx_update_alt(l; r): r as $x | _sbx_modify(l; _alternative(.; $x));

def tostring: _sbx_chk_enc(0) | _sbx_orig_tostring;
def tojson: _sbx_chk_enc(1) | _sbx_orig_tojson;
def _tohtml: _sbx_chk_enc(2) | _sbx_orig_tohtml;
def _touri: _sbx_chk_enc(2) | _sbx_orig_touri;
def _tourid: _sbx_chk_enc(2) | _sbx_orig_tourid;
def _tocsv: _sbx_chk_enc(2) | _sbx_orig_tocsv;
def _totsv: _sbx_chk_enc(2) | _sbx_orig_totsv;
def _tosh: _sbx_chk_enc(2) | _sbx_orig_tosh;
def _tobase64: _sbx_chk_enc(2) | _sbx_orig_tobase64;
def _tobase64d: _sbx_chk_enc(2) | _sbx_orig_tobase64d;
def format($f): _sbx_chk_enc(2) | _sbx_orig_format($f);
def add: _sbx_chk_addall | _sbx_orig_add;
def add(f): [f] | add;
def join($x): _sbx_chk_join($x) | _sbx_orig_join($x);
def flatten: _sbx_chk_flatten | _sbx_orig_flatten;
def flatten($d): _sbx_chk_flatten | _sbx_orig_flatten($d);
def transpose: _sbx_chk_transpose | _sbx_orig_transpose;
def explode: _sbx_chk_explode | _sbx_orig_explode;
def split($s): _sbx_chk_split($s) | _sbx_orig_split($s);
def indices($i): _sbx_chk_indices($i) | _sbx_orig_indices($i);
def index($i): _sbx_chk_indices($i) | _sbx_orig_index($i);
def rindex($i): _sbx_chk_indices($i) | _sbx_orig_rindex($i);
def contains($b): _sbx_chk_contains($b) | _sbx_orig_contains($b);
def inside($b): _sbx_chk_contains($b) | _sbx_orig_inside($b);
def sort: _sbx_chk_sort | _sbx_orig_sort;
def unique: _sbx_chk_sort | _sbx_orig_unique;
def min: _sbx_chk_sort | _sbx_orig_min;
def max: _sbx_chk_sort | _sbx_orig_max;
def _sort_by(k): k as $k | _sbx_chk_sort($k) | _sbx_orig_sort_by($k);
def _group_by(k): k as $k | _sbx_chk_sort($k) | _sbx_orig_group_by($k);
def _unique_by(k): k as $k | _sbx_chk_sort($k) | _sbx_orig_unique_by($k);
def _min_by(k): k as $k | _sbx_chk_sort($k) | _sbx_orig_min_by($k);
def _max_by(k): k as $k | _sbx_chk_sort($k) | _sbx_orig_max_by($k);
def sort_by(f): _sort_by(map([f]));
def group_by(f): _group_by(map([f]));
def unique_by(f): _unique_by(map([f]));
def min_by(f): _min_by(map([f]));
def max_by(f): _max_by(map([f]));
def bsearch($t): _sbx_chk_bsearch($t) | _sbx_orig_bsearch($t);
def tonumber: _sbx_chk_tonumber | _sbx_orig_tonumber;
def fromjson: _sbx_fromjson;
def keys_unsorted: if type == "object" then _sbx_keys_unsorted else keys end;
def to_entries: [keys_unsorted[] as $k | {key: $k, value: .[$k]}];
def with_entries(f): to_entries | map(f) | from_entries;
def strftime($f): _sbx_chk_timefmt($f) | _sbx_orig_strftime($f);
def strflocaltime($f): _sbx_chk_timefmt($f) | _sbx_orig_strflocaltime($f);

def _match(re; flags; test):
  test as $t | flags as $f | re as $r | _sbx_match($r; $f; $t);
def match($re; $flags): _match($re; $flags; false)[];
def match($re):
  if $re | type == "array" then match($re[0]; $re[1]) else match($re; null) end;
def test($re; $flags): _match($re; $flags; true);
def test($re):
  if $re | type == "array" then test($re[0]; $re[1]) else test($re; null) end;
def capture($re; $flags): match($re; $flags) | .captures | _captures;
def capture($re):
  if $re | type == "array" then capture($re[0]; $re[1]) else capture($re; null) end;
def scan($re; $flags):
  match($re; $flags + "g") |
  if .captures == [] then .string else [.captures[].string] end;
def scan($re): scan($re; null);
def splits($re; $flags):
  .[foreach (match($re; $flags + "g"), null) as {$offset, $length}
      (null; {start: .next, end: $offset, next: $offset + $length})];
def splits($re): splits($re; null);
def split($re; $flags): [splits($re; $flags)];
def sub($re; str; $flags):
  reduce match($re; $flags) as {$offset, $length, $captures}
    ({s: ., r: []};
      reduce ($captures | _captures | str) as $s
        (.i = 0; .r[.i] += .s[.next:$offset] + $s | .i += 1) |
      .next = $offset + $length) | .r[] + .s[.next:] // .s;
def sub($re; str): sub($re; str; null);
def gsub($re; str; $flags): sub($re; str; $flags + "g");
def gsub($re; str): sub($re; str; "g");

def setpath(p; v):
  v as $v | p as $p | _sbx_chk_setpath($p) | _sbx_orig_setpath($p; $v);
def getpath(p):
  p as $p | if _sbx_chk_getpath($p) then _sbx_orig_getpath($p) else empty end;
def delpaths(ps): ps as $ps | _sbx_chk_delpaths($ps) | _sbx_orig_delpaths($ps);
def _assign(p; $x): _sbx_assign(p; $x);
def _modify(p; f): _sbx_modify(p; f);
def map_values(f): .[] |= f;
def walk(f):
  def _walk:
    if type == "array" then
      map(_walk)
    elif type == "object" then
      map_values(_walk)
    end | f;
  _walk;
def del(f): delpaths([path(f)]);
def pick(f): . as $v | reduce path(f) as $p (null; setpath($p; $v | getpath($p)));
def fromstream(f):
  foreach f as $pv (
    null;
    if .e then null end |
    $pv as [$p, $v] |
    if $pv | length == 2 then
      setpath(["v"] + $p; $v) |
      setpath(["e"]; $p | length == 0)
    else
      setpath(["e"]; $p | length == 1)
    end;
    if .e then .v else empty end
  );
def INDEX(stream; idx_expr):
  reduce stream as $row ({}; .[$row | idx_expr | tostring] = $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr | _sbx_chk_idx]]];
def JOIN($idx; stream; idx_expr): stream | [., $idx[idx_expr | _sbx_chk_idx]];
def JOIN($idx; stream; idx_expr; join_expr):
  stream | [., $idx[idx_expr | _sbx_chk_idx]] | join_expr;
def IN(s): any(_sbx_op_eq(s; .); .);
def IN(src; s): any(_sbx_op_eq(src; s); .);
.`

var (
	preludeOnce  sync.Once
	preludeNames map[string]bool // "name/arity" defined by the prelude
	preludeDefs  []preludeDef    // in order
	preludeErr   error
)

// preludeDef is one definition of the prelude: its text, and the names it
// refers to (any identifier in it: a superset).
type preludeDef struct {
	name string
	text string
	refs []string
}

// implicitNames are called by gojq's compiler for syntax that names no
// function (string formats, update operators, .[x], ..): the prelude's
// definitions of them must be there whatever the query's text says.
var implicitNames = []string{"tostring", "tojson", "_tohtml", "_touri", "_tourid", "_tocsv",
	"_totsv", "_tosh", "_tobase64", "_tobase64d", "format", "_modify", "_assign", "recurse",
	"debug", "_index", "_slice", "_plus", "_negate", "_match", "_last"}

var identifier = regexp.MustCompile(`[a-zA-Z_][a-zA-Z0-9_]*`)

// Preload parses the prelude (a few milliseconds), which the first
// Compile of a process does otherwise: a process that will compile
// queries calls it ahead of them. An error is Compile's to report.
func Preload() { _ = loadPrelude() }

// loadPrelude parses the prelude, once, for parsePrelude and preludeNames.
func loadPrelude() error {
	preludeOnce.Do(func() {
		q, err := gojq.Parse(prelude)
		if err != nil {
			preludeErr = err
			return
		}
		preludeNames = map[string]bool{}
		for _, fd := range q.FuncDefs {
			preludeNames[fd.Name+"/"+strconv.Itoa(len(fd.Args))] = true
			text := fd.String()
			preludeDefs = append(preludeDefs, preludeDef{name: fd.Name, text: text, refs: identifier.FindAllString(text, -1)})
		}
	})
	return preludeErr
}

// parsePrelude returns the prelude's definitions that query (already
// rewritten) can reach, freshly parsed: gojq's compiler may modify the
// syntax tree it is given. The prelude itself is parsed once; compiling
// only what a query reaches saves most of a small query's compile time.
func parsePrelude(query *gojq.Query) ([]*gojq.FuncDef, error) {
	if err := loadPrelude(); err != nil {
		return nil, err
	}
	need := map[string]bool{}
	for _, n := range implicitNames {
		need[n] = true
	}
	for _, n := range identifier.FindAllString(query.String(), -1) {
		need[n] = true
	}
	// A definition refers only to itself and to those before it: one pass
	// from the last finds every one reachable.
	keep := make([]bool, len(preludeDefs))
	for i := len(preludeDefs) - 1; i >= 0; i-- {
		d := preludeDefs[i]
		if !need[d.name] {
			continue
		}
		keep[i] = true
		for _, r := range d.refs {
			need[r] = true
		}
	}
	var b strings.Builder
	for i, d := range preludeDefs {
		if keep[i] {
			b.WriteString(d.text)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('.')
	q, err := gojq.Parse(b.String())
	if err != nil {
		return nil, err
	}
	return q.FuncDefs, nil
}
