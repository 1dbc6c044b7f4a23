package blobfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/aws/smithy-go"
	"github.com/mcplro/lro"
	"gocloud.dev/gcerrors"
)

var (
	// ErrTooLarge: a file grew past [WithMaxObjectBytes] while it was
	// buffered; it is never uploaded. It wraps [lro.ErrFileTooLarge].
	ErrTooLarge = fmt.Errorf("blobfs: file larger than the cap on a buffered object (WithMaxObjectBytes): %w", lro.ErrFileTooLarge)
	// ErrUnsupportedURL: a URL that [Open] cannot take, such as one with
	// a prefix query parameter (the prefix is the URL's path).
	ErrUnsupportedURL = errors.New("blobfs: unsupported store URL")
)

// deniedCodes are the S3 error codes of a request the store refused for
// its credentials or policy: gocloud maps only AccessDenied and Forbidden
// to PermissionDenied, and a wrong secret (SignatureDoesNotMatch) would
// read as an unknown error.
var deniedCodes = map[string]bool{
	"AccessDenied":                 true,
	"Forbidden":                    true,
	"SignatureDoesNotMatch":        true,
	"InvalidAccessKeyId":           true,
	"ExpiredToken":                 true,
	"InvalidToken":                 true,
	"TokenRefreshRequired":         true,
	"AllAccessDisabled":            true,
	"AccountProblem":               true,
	"InvalidSecurity":              true,
	"AuthorizationHeaderMalformed": true,
	"RequestTimeTooSkewed":         true,
}

// mapErr returns err of the bucket as the engine reads errors: a missing
// object is fs.ErrNotExist, a create-only upload that met an object is
// fs.ErrExist, a denied request (a wrong secret among them) is
// fs.ErrPermission, a request that ran out of time is
// os.ErrDeadlineExceeded (each wrapping the store's error, which says
// more). A missing bucket is not fs.ErrNotExist: it is the store's
// configuration that is wrong, not a file that is gone
// (lro.ErrStoreMisconfigured).
func mapErr(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch code := ae.ErrorCode(); {
		case deniedCodes[code]:
			return fmt.Errorf("%w: %w", fs.ErrPermission, err)
		case code == "NoSuchBucket":
			return fmt.Errorf("blobfs: the bucket does not exist: %w: %w", lro.ErrStoreMisconfigured, err)
		}
	}
	var kind error
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		kind = fs.ErrNotExist
	case gcerrors.FailedPrecondition, gcerrors.AlreadyExists:
		kind = fs.ErrExist
	case gcerrors.PermissionDenied:
		kind = fs.ErrPermission
	case gcerrors.DeadlineExceeded:
		kind = os.ErrDeadlineExceeded
	default:
		return err
	}
	return fmt.Errorf("%w: %w", kind, err)
}

func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }
