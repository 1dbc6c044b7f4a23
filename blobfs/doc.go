// Package blobfs keeps the offloaded files of [lro] in object storage, so
// that the replicas of a server behind a load balancer share them: a
// result offloaded by one replica can be followed with lro_extract or
// resources/read on any other.
//
// It implements [lro.FS] over a [gocloud.dev/blob] bucket. Importing it
// registers the s3:// scheme for Config.OutputDir (S3, MinIO, R2 and other
// S3-compatible stores):
//
//	import _ "github.com/mcplro/lro/blobfs"
//
//	// ATLATL_PROMPT__OFFLOAD__OUTPUT_DIR=s3://my-bucket/lro?region=eu-west-1
//	off, err := lro.New(cfg)
//
// Credentials come from the AWS SDK's standard chain (AWS_ACCESS_KEY_ID
// and AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared config files, web
// identity, the instance role), never from the URL. The query takes the
// gocloud s3blob parameters: region, endpoint (for MinIO or R2, with
// use_path_style=true where the store wants it), profile,
// request_checksum_calculation and so on. Azure Blob Storage (azblob://,
// tested against Azurite) works once gocloud.dev/blob/azureblob is imported
// and the scheme is passed to [Register]; other gocloud drivers (gs://)
// register the same way, untested here.
//
// # Guarantees
//
//   - An object is visible complete or not at all. The engine writes a
//     temporary name and renames it: here the temporary file is a private
//     buffer in memory (bounded by the engine's per-file cap and by
//     [WithMaxObjectBytes]), and Rename uploads it to its final key in one
//     PUT that may only create the object (If-None-Match: *), so a name is
//     never replaced. A buffer that Remove discards never reaches the
//     store.
//   - Names are plain file names under the URL's prefix; the prefix's
//     subfolders and objects of other names are never listed to the
//     engine, which reads and deletes only names of its own pattern.
//   - The expiry the engine records in a file (Chtimes) travels with the
//     object as its metadata, so a replica with a shorter TTL never
//     deletes a file before the TTL it was written with.
//   - Removing an object that another replica removed first, or is
//     removing, is fs.ErrNotExist, which the janitor takes as done: every
//     replica may run one, and each removal is counted and reported once
//     across replicas (a create-only claim, .removing/{name} under the
//     prefix, picks the replica that removes it).
//   - Every request is bounded in time: [DefaultTimeout] (10 s) for a
//     listing's page, a deletion or the metadata of an object, and that
//     plus the time of its bytes at [DefaultMinThroughput] (16 MiB/s) for
//     an upload or a read; timeout= in the URL or [WithTimeout] changes
//     it. A store that is down, hangs or denies access fails the
//     operation, and the engine falls back to the truncated inline result
//     with a plain warning (the store's error, which may name internal
//     hosts, goes to the log and the event only).
//   - A store known to be down costs nothing. After a request timed out
//     or got no answer (a connection refused or dropped, a 5xx), every
//     operation fails at once with [lro.ErrStoreDown] (an offload falls
//     back straight away, lro_extract and resources/read answer that the
//     store could not be reached), while one probe every
//     [DefaultProbeInterval] (probe_interval= in the URL,
//     [WithProbeInterval]) lists one name under the prefix; the first
//     answer ends the outage. The engine logs and counts the change of
//     state (lro.store.state_changes), not each call.
//
// Files are [lro.FS] Remote: descriptors point to lro_extract and
// resources/read, and file_path is the object's URL
// (s3://my-bucket/lro/atlatl-recall-01J....jsonl). lro_extract queries a
// private local copy of the object in its worker processes, made on the
// object's first query: a later query or read of it asks the store for the
// object's metadata (one HEAD, [FS.Stat]) and reads the copy, and within
// a few seconds of the last it asks nothing. Published objects never
// change (the upload only creates, and a name is never reused), so a copy
// holds the object's bytes for as long as the object exists.
// resources/read streams the object when there is no copy.
package blobfs
