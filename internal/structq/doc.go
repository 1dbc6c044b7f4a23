// Package structq answers lro_extract's structured questions: a question
// asked with arguments (where, select, sort, limit, aggregate, group_by)
// rather than a jq program, so that a model that cannot write jq can still
// filter, count, sum and rank the records of an offloaded file, exactly.
//
// A question runs on the same engine as a query, in the same workers,
// under the same limits and cache: [Spec.Program] compiles it to a
// trusted jq program in slurp mode, one call of a Go function the sandbox
// registers,
//
//	_lro_structq($q;["status","trace.parent"])
//
// whose second argument names the fields the question reads, so that the
// engine's projection decodes those fields only and keeps them in its
// columns; the function, [Apply], does the rest in Go: the conditions,
// sort, limit, aggregation and grouping, with exact decimal sums (scaled
// integers or big.Rat, never float additions). Records output whole
// (_lro_structq_records) are printed by the sandbox from their lines, as
// a sorting recipe's are. The question itself travels as the variable
// $q, in the canonical form [Spec.Value] gives, so that one compiled
// program serves every value.
//
// [Parse] checks the arguments first, in the server, and names the
// argument at fault; [Spec.Answer] turns what Apply returned into the
// tool's answer, cut to a budget with the cut said plainly.
//
// No answer is 0 or null without saying why: the pass that answers also
// notes which of the question's fields some record has (a field none
// has is a [FieldsError], which the caller completes with the records'
// [Shape]: their fields and the closest name), which conditions no
// record's value could meet for its type, and what the matched records
// hold where an aggregate found nothing to aggregate; the answer says
// the last two in notes. Values too long for their share of the answer
// (an aggregate's, a group's key, a selected field) are cut, ending in
// [CutMarker], so that no answer exceeds the engine's output.
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
// null; in holds when the field equals one of its values. Sort orders
// null first, then booleans, numbers, strings, arrays, objects; ties keep
// the file's order. sum and avg read the numbers among the values (null
// when there are none), min and max return the least and greatest value
// in sort's order as the record has it, distinct counts the values other
// than null, numbers by their value ("1.50" and 1.5 are one).
package structq
