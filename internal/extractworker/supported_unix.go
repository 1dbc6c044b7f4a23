//go:build unix

package extractworker

// supported: workers run on Unix systems, where Open can refuse FIFOs,
// links and other users' files as the parent does.
const supported = true
