// Package recipes infers what a descriptor says of generic records and
// what lro_extract runs on them: their shape (Infer, Shape), the JSON
// schema and the ten jq recipes that shape allows, the jq names of their
// fields, and what writing a set learns of its records on the way (Stats:
// the namespaces of memories, the shape of generic records, the range of
// scores).
//
// Recipe is what a recipe is to this package and to internal/extract; the
// root package's lro.Recipe, which a server author reads, holds the same
// fields and the shell command the descriptor shows.
package recipes
