// Package store owns the offloaded files of an lro Offloader: the
// directory (or object store) they live in, their names, the quota they
// are counted against, and the janitor that deletes them when their TTL
// has passed.
//
// It holds:
//
//   - [FS], the directory's interface, and [DirFS], its default: a private
//     directory reached through an os.Root, reopened when it is replaced;
//   - the registry of object stores ([RegisterStore]), which open an [FS]
//     for an output_dir URL, and the words a model is told when one fails
//     ([Error], [FallbackWarning]);
//   - [Store], which names files ({prefix}-{operation}-{ULID}.jsonl, the
//     ULID carrying the writer's name and creation time), takes and gives
//     back room of the quota ([Store.Reserve], [Store.Commit]), evicts the
//     files that expire first when the quota is passed, and runs the
//     janitor ([Store.RunJanitor], [Store.Sweep]).
//
// The package lro re-exports what a server author uses (FS, DirFS,
// RegisterStore, the quota's errors and events) under its own names; this
// package knows nothing of records, tools or hosts.
package store
