// Package structq answers lro_extract's structured questions: a question
// asked with arguments (where, select, sort, limit, aggregate, group_by)
// rather than a jq program, so that a model that cannot write jq can still
// filter, count, sum and rank the records of an offloaded file, exactly.
//
// A question runs on the same engine as a query, in the same workers,
// under the same limits and cache: [Program] compiles it to a trusted jq
// program in slurp mode,
//
//	map([.status, .trace.parent]) | _lro_structq($q)
//
// whose first half reads the fields the question names (so that the
// engine's projection decodes those fields only, and keeps them in its
// columns) and whose second half, a Go function the sandbox registers
// ([Apply]), does the rest: the conditions, sort, limit, aggregation and
// grouping, with exact decimal sums (big.Rat, never float additions).
// The question itself travels as the variable $q, in the canonical form
// [Spec.Value] gives, so that one compiled program serves every value.
//
// [Parse] checks the arguments first, in the server, and names the
// argument at fault; [Answer] turns what Apply returned into the tool's
// answer, cut to a budget with the cut said plainly.
//
// # Semantics
//
// A field is a dotted path of object keys ("trace.parent"); it is
// missing where a key is absent or a step is not an object. A value and
// a condition's value compare as numbers when both are numbers or strings
// that read as numbers ("123.45"), exactly; a condition's number orders
// numbers only ("N/A" is not greater than 999); other strings compare
// bytewise, and other types are equal only when identical. contains (case
// insensitive) and matches (RE2, as grep) test a string or number, or each
// element of an array; exists is true when the field is there and not
// null. Sort orders null first, then booleans, numbers, strings, arrays,
// objects; ties keep the file's order.
package structq
