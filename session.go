package lro

import (
	"container/list"
	"sync"

	"github.com/mcplro/lro/host"
)

// maxSessions bounds the sessions whose inline tokens are counted. Past
// it the least recently seen session is forgotten (and starts over at
// zero), so that clients which never end their sessions cannot grow the
// state without bound.
const maxSessions = 4096

// sessionBudget counts, per session, the tokens of the results sent
// inline: the headroom gate of Config.SessionBudgetTokens.
type sessionBudget struct {
	mu    sync.Mutex
	used  map[string]*list.Element // of *sessionUse
	order *list.List               // most recently seen first
}

type sessionUse struct {
	id     string
	tokens int
}

// admit charges tokens to session when they fit budget, or when they are
// at most floor() (a result no pointer would make smaller), and reports
// whether the result may go inline. A result refused is not charged: it
// is offloaded instead. floor, which may call the user's WithDelivery
// function, is called only when the budget is passed, and not under the
// lock.
func (s *sessionBudget) admit(session string, tokens, budget int, floor func() int) bool {
	if s.add(session, 0)+tokens > budget && tokens > floor() {
		return false
	}
	s.add(session, tokens)
	return true
}

// add charges tokens to session and returns its total.
func (s *sessionBudget) add(session string, tokens int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used == nil {
		s.used, s.order = map[string]*list.Element{}, list.New()
	}
	el, ok := s.used[session]
	if !ok {
		if s.order.Len() >= maxSessions {
			oldest := s.order.Back()
			s.order.Remove(oldest)
			delete(s.used, oldest.Value.(*sessionUse).id)
		}
		el = s.order.PushFront(&sessionUse{id: session})
		s.used[session] = el
	}
	s.order.MoveToFront(el)
	u := el.Value.(*sessionUse)
	u.tokens += tokens
	return u.tokens
}

// end forgets session.
func (s *sessionBudget) end(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.used[session]; ok {
		s.order.Remove(el)
		delete(s.used, session)
	}
}

// EndSession forgets what the session budget counted for session, when
// the MCP session ends. The adapters of this module call it; an adapter
// for another host should too (the state is bounded regardless).
func (o *Offloader) EndSession(session string) { o.sessions.end(session) }

// mustOffload reports whether a result of tokens that would go inline
// must be offloaded instead, because the session's inline results would
// pass Config.SessionBudgetTokens; otherwise it charges them. A result no
// larger than the pointer of the call's delivery d stays inline.
func (o *Offloader) mustOffload(call host.Call, tokens int, d *callDelivery) bool {
	budget := o.cfg.SessionBudgetTokens
	if budget <= 0 || call.Session == "" || tokens <= 0 {
		return false
	}
	return !o.sessions.admit(call.Session, tokens, budget, func() int { return d.get().mode.pointerTokens(o) })
}

// The sizes that descriptors stay within, with a 60-character path (the
// tests hold them to it).
const (
	descriptorBudgetTokens = 700
	compactBudgetTokens    = 150
)
