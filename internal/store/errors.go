package store

import "errors"

// Why a file could not be written, besides a failed write. The package
// lro re-exports them under the same names; its documentation says more.
var (
	// ErrOverQuota: the file would not fit the quota even with every
	// other file of this name evicted.
	ErrOverQuota = errors.New("lro: over the offload directory's quota (max_dir_bytes)")
	// ErrFileTooLarge: the file would be larger than the per-file cap.
	ErrFileTooLarge = errors.New("lro: over the per-file cap")
	// ErrLowDiskSpace: writing the file would leave less free space than
	// the reserve. It also wraps syscall.ENOSPC.
	ErrLowDiskSpace = errors.New("lro: too little free disk space")
	// ErrStoreDown: an object store found down (timed out, or
	// unreachable) was not asked, until a probe finds it up.
	ErrStoreDown = errors.New("lro: the file store is down")
	// ErrStoreMisconfigured: the store could not be opened (its URL is
	// wrong), or answers that it is set up wrong (no such bucket).
	ErrStoreMisconfigured = errors.New("lro: the file store is misconfigured")
)
