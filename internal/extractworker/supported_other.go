//go:build !unix

package extractworker

// supported: workers need Open, which this platform lacks.
const supported = false
