// Package extract is lro_extract's glue: the tool that answers queries of
// offloaded files (recipes, jq queries, questions without jq, grep and
// lines) and the resources/read of those files. It owns what the tool
// keeps between calls (decoded records, compiled recipes, local copies of
// a store's files, the warmings of files just published), the admission
// every call and read passes first, the safe open of an offloaded file,
// the limits (Limits) and which program the worker processes run.
//
// The queries themselves run in internal/extractworker (workers, or this
// process when chosen) over internal/jqsandbox. The root package holds a
// Tool in its engine and exposes it as lro.ExtractLimits,
// Offloader.Extract and the Host methods; nothing here imports the root:
// what the tool needs of the engine comes in an Env.
package extract
