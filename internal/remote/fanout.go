package remote

import (
	"context"
	"errors"
	"io"
	"sync"
)

// DefaultPerConnection is how many calls of a fan-out share one
// connection at once. sshd refuses sessions past MaxSessions (10 by
// default) on a connection, and the user's own sessions (an attach, a
// second swarm top) need room too.
const DefaultPerConnection = 4

// Outcome is one call's end in a fan-out.
type Outcome struct {
	Result
	Err error
}

// Fanout runs calls in parallel: calls to hosts that share a connection
// (connKey: the same target) at most perConnection at a time, the others
// independently. Where no shared connection is up yet, one call goes
// first and makes it, so the rest share it instead of each opening a
// connection of its own (sshd drops unauthenticated connections past
// MaxStartups); if that one cannot connect, the rest of its group fail
// with its error at once rather than each waiting out the connect
// timeout. Each call keeps its own Timeout. Outcomes are in calls' order.
func (c *Client) Fanout(ctx context.Context, calls []Call, perConnection int) []Outcome {
	if perConnection < 1 {
		perConnection = 1
	}
	out := make([]Outcome, len(calls))
	groups := map[string][]int{}
	var keys []string
	for i, call := range calls {
		k := connKey(c, call.Host)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var wg sync.WaitGroup
	for _, k := range keys {
		wg.Go(func() { c.runGroup(ctx, calls, groups[k], perConnection, out) })
	}
	wg.Wait()
	return out
}

// runGroup runs the calls at idx, which share one connection.
func (c *Client) runGroup(ctx context.Context, calls []Call, idx []int, limit int, out []Outcome) {
	first := calls[idx[0]]
	if !c.CheckMaster(ctx, first.Host) {
		// ssh's message goes to the caller's stderr and, for the calls
		// that share its failure, into their error.
		var msg tail
		first.Stderr = teeTo(first.Stderr, &msg)
		o := c.runOne(ctx, first)
		out[idx[0]] = o
		if failedToConnect(o) {
			shared := Outcome{Result: Result{Code: ExitSSH, Elapsed: o.Elapsed}, Err: errors.New(Failure(o.Result, o.Err, msg.b))}
			for _, i := range idx[1:] {
				out[i] = shared
			}
			return
		}
		idx = idx[1:]
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, i := range idx {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = c.runOne(ctx, calls[i])
		})
	}
	wg.Wait()
}

// runOne runs a call with its timeout, its master already checked.
func (c *Client) runOne(ctx context.Context, call Call) Outcome {
	if call.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, call.Timeout)
		defer cancel()
	}
	res, err := c.run(ctx, call)
	return Outcome{Result: res, Err: err}
}

// failedToConnect: the call failed as ssh fails (no connection), so the
// other calls over the same connection would too.
func failedToConnect(o Outcome) bool { return o.Err != nil || o.Code == ExitSSH }

// maxTail is how much of ssh's stderr a fan-out keeps to quote: its
// message is one line.
const maxTail = 4 << 10

// tail keeps the last maxTail bytes written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > maxTail {
		t.b = append(t.b[:0], t.b[len(t.b)-maxTail:]...)
	}
	return len(p), nil
}

// teeTo writes to w (when set) and t.
func teeTo(w io.Writer, t *tail) io.Writer {
	if w == nil {
		return t
	}
	return io.MultiWriter(w, t)
}
