package lro

import (
	"errors"

	"github.com/mcplro/lro/internal/extract"
	"github.com/mcplro/lro/internal/store"
)

// The sentinel errors of the package. Each error the package returns for
// one of these reasons wraps it: test with errors.Is. The struct errors are
// [ConfigError] (a configuration key and its value) and [RecordError] (a
// record that is not JSON).
var (
	// ErrClosed is returned by Offload after Close.
	ErrClosed = errors.New("lro: offloader is closed")

	// Why a result got the fallback instead of a file, besides a failed
	// write: the Err of the Outcome and of the WriteFailedEvent wraps one
	// of these four.

	// ErrOverQuota: the file would not fit Config.MaxDirBytes even with
	// every other file of this Offloader's name evicted.
	ErrOverQuota = store.ErrOverQuota
	// ErrFileTooLarge: the file would be larger than the per-file cap
	// (see [WithMaxFileBytes]).
	ErrFileTooLarge = store.ErrFileTooLarge
	// ErrLowDiskSpace: writing the file would leave less free space on the
	// file system than the reserve (see [WithMinFreeBytes]). It also
	// wraps syscall.ENOSPC.
	ErrLowDiskSpace = store.ErrLowDiskSpace
	// ErrResultTooLarge: the tool result is larger than the cap of
	// [WithMaxResultBytes]; nothing was written.
	ErrResultTooLarge = errors.New("lro: the result is over the cap on results")

	// The errors of [Host.ReadResource]. Host adapters answer the
	// first with their SDK's resource-not-found error.

	// ErrResourceNotFound: the URI names no offloaded file of this
	// Offloader, or its file is gone (expired, deleted), or its line
	// range is malformed or past the end of the file.
	ErrResourceNotFound = extract.ErrResourceNotFound
	// ErrResourceTooLarge: the file is larger than the read limit (its
	// lines can be read in ranges), or than ExtractLimits.MaxFileBytes
	// (it is not read at all). Host adapters answer it as invalid params
	// (-32602) where their SDK lets them.
	ErrResourceTooLarge = extract.ErrResourceTooLarge
	// ErrResourceBusy: the server runs as many reads and lro_extract
	// calls as it admits (see ExtractLimits.MaxCalls and MaxCallBytes);
	// the message says when to retry.
	ErrResourceBusy = extract.ErrResourceBusy
)
