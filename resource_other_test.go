//go:build !unix

package lro

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
