// Package extractbench holds lro_extract's size-ladder benchmark
// (bench_test.go): the first and second query of a file through an MCP
// client, beside jq 1.6 running the recipe as the descriptor writes it and
// gojq running it in this process, in the same run. It has no code of its
// own outside its tests, which run on Linux.
package extractbench
