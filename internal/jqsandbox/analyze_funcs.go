package jqsandbox

import (
	"strconv"

	"github.com/itchyny/gojq"
	"github.com/mcplro/lro/internal/structq"
)

// plainFuncs are the builtins (name/arity) whose outputs are new values or
// parts of their input and arguments, and that may look at all of them:
// their input and the outputs of their arguments (each run on the input,
// a superset of what they really see) are needed whole. Builtins that
// read paths, other inputs or the environment are not here: a query that
// calls them is not analyzed.
var plainFuncs = setOf(
	"not/0", "length/0", "utf8bytelength/0", "keys/0", "keys_unsorted/0", "has/1", "in/1",
	"contains/1", "inside/1", "startswith/1", "endswith/1", "ltrimstr/1", "rtrimstr/1",
	"trim/0", "ltrim/0", "rtrim/0", "ascii_downcase/0", "ascii_upcase/0", "explode/0", "implode/0",
	"split/1", "split/2", "join/1", "test/1", "test/2", "match/1", "match/2", "capture/1", "capture/2",
	"scan/1", "scan/2", "splits/1", "splits/2", "sub/2", "sub/3", "gsub/2", "gsub/3",
	"index/1", "rindex/1", "indices/1", "tostring/0", "tojson/0", "fromjson/0", "tonumber/0",
	"add/0", "add/1", "any/0", "all/0", "any/1", "all/1", "any/2", "all/2", "flatten/0", "flatten/1",
	"sort/0", "unique/0", "min/0", "max/0", "floor/0", "ceil/0", "round/0", "sqrt/0", "fabs/0", "abs/0",
	"to_entries/0", "from_entries/0", "with_entries/1", "tostream/0", "isempty/1",
	"range/1", "range/2", "range/3", "error/0", "error/1", "ascii/0", "@text/0", "@json/0",
	"todate/0", "fromdate/0", "dateadd/2", "datesub/2", "date/0", "now/0", "mktime/0", "gmtime/0",
	"localtime/0", "strftime/1", "strptime/1", "todateiso8601/0", "fromdateiso8601/0",
	"isinfinite/0", "isnan/0", "isnormal/0", "infinite/0", "nan/0", "significand/0", "logb/0",
	"transpose/0", "combinations/0", "combinations/1", "walk/1", "map_values/1", "halt_error/0",
	"halt_error/1", "getpath/1", "paths/0", "paths/1", "leaf_paths/0", "del/1", "to_array/0",
	"tojson/0", "min_by/1", "max_by/1", "limit/2", "first/1", "last/1", "nth/2", "until/2",
	"repeat/1", "while/2", "recurse/0", "recurse/1", "recurse/2", "env/0", "builtins/0",
	"input_line_number/0", "splits/1", "ascii/0", "getpath/1", "pick/1", "debug/0", "debug/1",
	"stderr/0", "input_filename/0", "abs/0", "toarray/0", "have_literal_numbers/0",
	"have_decnum/0", "halt/0", "IN/1", "IN/2", "INDEX/1", "INDEX/2", "ltrimstr/1", "@base64/0",
	"@base64d/0", "@base32/0", "@base32d/0", "@uri/0", "@csv/0", "@tsv/0", "@html/0", "@sh/0",
	"getpath/1", "group_by/1", "unique_by/1", "sort_by/1", "values/0", "nulls/0",
)

// passFuncs pass some of their input through untouched after a test of
// its type or truthiness (select(. != null) for values).
var passFuncs = setOf("values/0", "nulls/0", "booleans/0", "numbers/0", "strings/0",
	"arrays/0", "objects/0", "iterables/0", "scalars/0")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// call applies a function call to in.
func (a *analyzer) call(f *gojq.Func, in []alt, env *varScope) []alt {
	if f.Name[0] == '$' {
		return a.variable(f.Name, env)
	}
	key := f.Name + "/" + strconv.Itoa(len(f.Args))
	switch key {
	case "empty/0":
		return nil
	case "type/0":
		return opaque // a projected object is still an object
	case "select/1":
		a.query(f.Args[0], in, env) // tested only
		return in
	case "length/0":
		for _, v := range in {
			if v.kind != altArray {
				a.need([]alt{v})
			}
		}
		return opaque
	case "first/0", "last/0":
		return a.index(&gojq.Index{Start: &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeNumber, Number: "0"}}}, in, in, env)
	case "reverse/0":
		return a.arrays(in, func(e []alt) []alt { return []alt{{kind: altArray, elem: e}} })
	case "map/1":
		return a.arrays(in, func(e []alt) []alt {
			return []alt{{kind: altArray, elem: a.query(f.Args[0], e, env)}}
		})
	case "sort_by/1", "group_by/1", "unique_by/1", "min_by/1", "max_by/1":
		// Sorted by the keys alone (gojq's sort is stable): the elements
		// are only moved.
		return a.arrays(in, func(e []alt) []alt {
			a.need(a.query(f.Args[0], e, env))
			switch f.Name {
			case "group_by":
				return []alt{{kind: altArray, elem: []alt{{kind: altArray, elem: e}}}}
			case "min_by", "max_by":
				return a.join(e, opaque)
			}
			return []alt{{kind: altArray, elem: e}}
		})
	case structq.FuncName + "/2", structq.RecordsFuncName + "/2":
		return a.question(f, in, env)
	case "first/1", "last/1", "limit/2":
		for _, arg := range f.Args[:len(f.Args)-1] {
			a.need(a.query(arg, in, env))
		}
		return a.query(f.Args[len(f.Args)-1], in, env)
	}
	if passFuncs[key] {
		return in
	}
	if !plainFuncs[key] {
		return a.fail()
	}
	a.need(in)
	for _, arg := range f.Args {
		a.need(a.query(arg, in, env))
	}
	return opaque
}

// arrays applies do to the elements of each array of in; anything else in
// in is needed whole, its elements seen as opaque.
func (a *analyzer) arrays(in []alt, do func(elem []alt) []alt) []alt {
	out := []alt{}
	for _, v := range in {
		if v.kind == altArray {
			out = a.join(out, do(v.elem))
			continue
		}
		a.need([]alt{v})
		a.need(do(opaque))
		out = a.join(out, opaque)
	}
	return out
}
