package proxy

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// notifyClient passes the local server's notifications to the client, but
// for its tool list changes: the server's own tell the client.
func (r *relay) notifyClient(ctx context.Context) {
	for {
		select {
		case n := <-r.sess.notes:
			if n.Method == string(mcp.MethodNotificationToolsListChanged) {
				continue
			}
			if b, err := json.Marshal(n); err == nil {
				r.write(b)
			}
		case <-ctx.Done():
			return
		case <-r.exited:
			return
		}
	}
}

// relaySession is the client's session on the local server.
type relaySession struct {
	notes chan mcp.JSONRPCNotification
	mu    sync.Mutex
	init  bool
	info  mcp.Implementation
	caps  mcp.ClientCapabilities
}

func newRelaySession() *relaySession {
	return &relaySession{notes: make(chan mcp.JSONRPCNotification, 64)}
}

func (s *relaySession) Initialize() { s.mu.Lock(); s.init = true; s.mu.Unlock() }
func (s *relaySession) Initialized() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}
func (s *relaySession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *relaySession) SessionID() string                                   { return "lro-proxy-stdio" }
func (s *relaySession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}
func (s *relaySession) SetClientInfo(i mcp.Implementation) { s.mu.Lock(); s.info = i; s.mu.Unlock() }
func (s *relaySession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}
func (s *relaySession) SetClientCapabilities(c mcp.ClientCapabilities) {
	s.mu.Lock()
	s.caps = c
	s.mu.Unlock()
}
