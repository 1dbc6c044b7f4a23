package extract

import (
	"fmt"
	"sync"
	"time"
)

// extractCalls admits the lro_extract calls of the process, and its
// resources/read of offloaded files (see Host.ReadResource). Before it
// existed, every call decoded its file (several times the file's size)
// before waiting for its turn, and 800 concurrent calls took 1.6 GiB; now
// a call that does not fit the budget is refused at once, and told when
// to retry, instead of waiting and holding memory and a handler of the
// server (1,600 concurrent resource reads took 1,055 MiB). The budget is
// the process's: it is shared by its Offloaders,
// each checking its own limits against it.
var extractCalls admission

// admission counts calls and the bytes they hold.
type admission struct {
	mu        sync.Mutex
	calls     int
	bytes     int64
	deadlines map[*admitted]time.Time // when each admitted call ends at the latest
}

type admitted struct{ bytes int64 }

// busyError refuses a call for lack of capacity; the model should retry
// after RetryAfter.
type busyError struct {
	what       string
	retryAfter time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("busy: %s; retry in %d s", e.what, max(1, int((e.retryAfter+time.Second-1)/time.Second)))
}

// enter admits a call that will end within timeout, if fewer than
// maxCalls are in; leave must be called when it ends.
func (a *admission) enter(maxCalls int, timeout time.Duration) (*admitted, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls >= maxCalls {
		return nil, &busyError{what: fmt.Sprintf("%d lro_extract calls and resource reads are running or waiting", a.calls), retryAfter: a.firstEnd()}
	}
	if a.deadlines == nil {
		a.deadlines = map[*admitted]time.Time{}
	}
	c := &admitted{}
	a.deadlines[c] = time.Now().Add(timeout)
	a.calls++
	return c, nil
}

// reserve lets the call c hold n more bytes, if the admitted calls hold
// no more than maxBytes with them. A single call larger than the whole
// budget is let in alone, so that a large file is slow rather than never
// readable.
func (a *admission) reserve(c *admitted, n, maxBytes int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bytes+n > maxBytes && a.bytes > c.bytes {
		return &busyError{what: fmt.Sprintf("the running lro_extract calls and resource reads hold %d MiB", a.bytes>>20), retryAfter: a.firstEnd()}
	}
	a.bytes += n
	c.bytes += n
	return nil
}

// leave ends the call c, releasing its bytes.
func (a *admission) leave(c *admitted) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bytes -= c.bytes
	a.calls--
	delete(a.deadlines, c)
}

// firstEnd returns how soon the first admitted call ends at the latest;
// a.mu is held.
func (a *admission) firstEnd() time.Duration {
	first := time.Duration(0)
	for _, d := range a.deadlines {
		if left := time.Until(d); first == 0 || left < first {
			first = left
		}
	}
	return max(first, time.Second)
}
