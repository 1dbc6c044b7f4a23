package blobfs

import (
	"errors"
	"fmt"
	"io/fs"

	"gocloud.dev/gcerrors"
)

var (
	// ErrTooLarge: a file grew past [WithMaxObjectBytes] while it was
	// buffered; it is never uploaded.
	ErrTooLarge = errors.New("blobfs: file larger than the cap on a buffered object (WithMaxObjectBytes)")
	// ErrUnsupportedURL: a URL that [Open] cannot take, such as one with
	// a prefix query parameter (the prefix is the URL's path).
	ErrUnsupportedURL = errors.New("blobfs: unsupported store URL")
)

// mapErr returns err of the bucket as the engine reads errors: a missing
// object is fs.ErrNotExist, a create-only upload that met an object is
// fs.ErrExist, a denied request is fs.ErrPermission (each wrapping the
// store's error, which says more).
func mapErr(err error) error {
	var kind error
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		kind = fs.ErrNotExist
	case gcerrors.FailedPrecondition, gcerrors.AlreadyExists:
		kind = fs.ErrExist
	case gcerrors.PermissionDenied:
		kind = fs.ErrPermission
	default:
		return err
	}
	return fmt.Errorf("%w: %w", kind, err)
}

func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }
