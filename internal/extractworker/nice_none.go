//go:build !unix

package extractworker

func lowerPriority(int) error { return nil }
