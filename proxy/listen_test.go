package proxy_test

import (
	"net"
	"time"
)

// listenRetry listens on addr, retrying while the port is still held by a
// server that is shutting down.
func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}
