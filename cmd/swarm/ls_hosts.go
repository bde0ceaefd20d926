package main

// ls, ralph ls and top over many hosts: each host's swarm is asked for
// its list as JSON, all hosts at once, one ssh call each.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/swarmtools/swarm/internal/board"
	"github.com/swarmtools/swarm/internal/remote"
	"github.com/swarmtools/swarm/internal/termtext"
	"github.com/swarmtools/swarm/internal/worker"
)

// maxListing bounds what one host's listing may send (64 MiB, as a state file): far beyond the
// JSON of thousands of workers, and a host that sends more is not
// answering a listing.
const maxListing = 64 << 20

// unreachable is the status a host that could not be listed gets in a
// listing (its STATUS cell, its JSON object's "status").
const unreachable = "unreachable"

// hostAnswer is one host's answer to a listing.
type hostAnswer struct {
	Host string
	// Out is the host's stdout when it answered.
	Out []byte
	// Err says why it did not, as printable text ("" when it did).
	Err string
}

// hostsCaller runs a swarm command line (its words) on hosts.
type hostsCaller struct {
	hosts []remote.Host
	ssh   *remote.Client
	set   hostSet
}

// newHostsCaller resolves the hosts of a listing; local reports whether
// this machine is one of them.
func newHostsCaller(f *factory, set hostSet) (c *hostsCaller, local bool, err error) {
	hosts, local, err := f.hosts(set)
	if err != nil {
		return nil, false, err
	}
	client, err := f.sshClient(set.ConnectTimeout)
	if err != nil {
		return nil, false, err
	}
	return &hostsCaller{hosts: hosts, ssh: client, set: set}, local, nil
}

// ask runs swarm args on every host, in parallel, each within the
// connect timeout.
func (c *hostsCaller) ask(ctx context.Context, args ...string) []hostAnswer {
	calls := make([]remote.Call, len(c.hosts))
	outs := make([]capWriter, len(c.hosts))
	errs := make([]capWriter, len(c.hosts))
	for i, h := range c.hosts {
		outs[i].max, errs[i].max = maxListing, maxListing
		calls[i] = remote.Call{Host: h, Command: remote.Command(h.SwarmArgv(args...)),
			Stdout: &outs[i], Stderr: &errs[i], Timeout: c.set.ConnectTimeout}
	}
	answers := make([]hostAnswer, len(c.hosts))
	for i, o := range c.ssh.Fanout(ctx, calls, remote.DefaultPerConnection) {
		a := hostAnswer{Host: c.hosts[i].Name, Out: outs[i].b}
		switch why := remote.Failure(o.Result, o.Err, errs[i].b); {
		case why != "":
			a.Err = "unreachable: " + why
		case o.Code != 0:
			a.Err = fmt.Sprintf("swarm failed (exit %d): %s", o.Code, lastLine(errs[i].b))
		case outs[i].over:
			a.Err = fmt.Sprintf("sent more than %d bytes", maxListing)
		}
		answers[i] = a
	}
	return answers
}

// lastLine is the last non-empty line of b, printable.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return termtext.Line(strings.TrimSpace(lines[len(lines)-1]))
}

// capWriter keeps the first max bytes written to it, and whether more
// came.
type capWriter struct {
	b    []byte
	max  int64
	over bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	room := c.max - int64(len(c.b))
	if int64(len(p)) > room {
		c.over = true
		p = p[:max(0, room)]
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

// decodeRows decodes a host's JSON list into its objects, each kept raw.
func decodeRows(a *hostAnswer) []map[string]json.RawMessage {
	if a.Err != "" {
		return nil
	}
	var rows []map[string]json.RawMessage
	if err := json.Unmarshal(a.Out, &rows); err != nil {
		a.Err = "not a listing: " + termtext.Line(err.Error())
		return nil
	}
	return rows
}

// withHost returns obj with "host" set to host.
func withHost(obj map[string]json.RawMessage, host string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(obj)+1)
	for k, v := range obj {
		out[k] = v
	}
	out["host"], _ = json.Marshal(host)
	return out
}

// unreachableRow is a host that could not be listed, as a JSON object.
func unreachableRow(a hostAnswer) map[string]json.RawMessage {
	obj := map[string]json.RawMessage{}
	obj["host"], _ = json.Marshal(a.Host)
	obj["status"], _ = json.Marshal(unreachableOrFailed(a))
	obj["error"], _ = json.Marshal(a.Err)
	return obj
}

// toRaw turns v (a record) into its JSON object.
func toRaw(v any) map[string]json.RawMessage {
	data, _ := json.Marshal(v)
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(data, &obj) // json.Marshal's own output of a struct
	return obj
}

// hostsFailed warns about each host that could not be listed and returns
// the listing's error: exit 1 when one could not, after every other
// host's rows were printed.
func hostsFailed(io *IO, answers []hostAnswer) error {
	failed := 0
	for _, a := range answers {
		if a.Err != "" {
			failed++
			io.Warn(fmt.Sprintf("host %s: %s", a.Host, a.Err))
		}
	}
	if failed > 0 {
		return exitCode(exitFail)
	}
	return nil
}

// qualified is a worker's name as typed to reach it: HOST:NAME, or NAME
// on this machine.
func qualified(host, name string) string {
	if host == remote.Local {
		return name
	}
	return host + ":" + name
}

// runLsHosts is ls --all-hosts / --hosts: this machine's workers (when
// it is one of the hosts) and every host's, with a HOST column (JSON:
// "host"); a host that cannot be listed is one row saying why.
func runLsHosts(opts *lsOptions) error {
	caller, local, err := opts.Caller(opts.Hosts)
	if err != nil {
		return err
	}
	args := []string{"ls", "--format", "json", "--status", opts.Status}
	if opts.Tag != "" {
		args = append(args, "--tag", opts.Tag)
	}
	answers := caller.ask(context.Background(), args...)
	var rows []hostWorker
	if local {
		shown, err := opts.listed()
		if err != nil {
			return err
		}
		for _, l := range shown {
			rows = append(rows, hostWorker{host: remote.Local, live: l, raw: toRaw(recordOf(l))})
		}
	}
	for i := range answers {
		for _, obj := range decodeRows(&answers[i]) {
			rows = append(rows, hostWorker{host: answers[i].Host, live: liveOf(obj), raw: obj})
		}
	}
	if err := printHostWorkers(opts, rows, answers); err != nil {
		return err
	}
	return hostsFailed(opts.IO, answers)
}

// hostWorker is a worker of a listing over hosts.
type hostWorker struct {
	host string
	live worker.Live
	raw  map[string]json.RawMessage
}

// liveOf reads a host's ls --format json record as a worker.
func liveOf(obj map[string]json.RawMessage) worker.Live {
	data, _ := json.Marshal(obj)
	var r lsRecord
	_ = json.Unmarshal(data, &r) // json.Marshal's own output; a host's odd field stays zero
	// Lost and not started as the host marked them (its table says
	// stopped(lost) and stopped(not-started); so does this one's).
	l := worker.Live{Worker: r.Worker, Lost: r.Lost, NotStarted: r.NotStarted}
	if r.ExitCode != nil {
		l.ExitCode, l.HasExit = *r.ExitCode, true
	}
	return l
}

// hostRowsJSON is the JSON of a listing over hosts: each row with its
// host, then a row for each host that did not answer.
func hostRowsJSON[R any](rows []R, of func(R) (host string, raw map[string]json.RawMessage), answers []hostAnswer) []map[string]json.RawMessage {
	out := make([]map[string]json.RawMessage, 0, len(rows))
	for _, r := range rows {
		host, raw := of(r)
		out = append(out, withHost(raw, host))
	}
	for _, a := range answers {
		if a.Err != "" {
			out = append(out, unreachableRow(a))
		}
	}
	return out
}

// printHostWorkers prints ls over hosts in opts.Format.
func printHostWorkers(opts *lsOptions, rows []hostWorker, answers []hostAnswer) error {
	switch opts.Format {
	case "json":
		return printJSON(opts.IO, hostRowsJSON(rows, func(r hostWorker) (string, map[string]json.RawMessage) { return r.host, r.raw }, answers))
	case "names":
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(termtext.Line(qualified(r.host, r.live.Name)) + "\n")
		}
		_, err := io.WriteString(opts.IO.Out, b.String())
		return err
	}
	tw, flush := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "HOST\t"+strings.Join(lsColumns, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, r.host+"\t"+strings.Join(workerCells(r.live), "\t"))
	}
	for _, a := range answers {
		if a.Err != "" {
			fmt.Fprintf(tw, "%s\t-\t%s\t-\t-\t-\t%s\n", a.Host, unreachableOrFailed(a), termtext.Line(a.Err))
		}
	}
	return flush()
}

// unreachableOrFailed is the STATUS of a host that was not listed.
func unreachableOrFailed(a hostAnswer) string {
	if strings.HasPrefix(a.Err, "unreachable") {
		return unreachable
	}
	return "failed"
}

// runRalphListHosts is ralph ls --all-hosts / --hosts.
func runRalphListHosts(opts *ralphListOptions) error {
	caller, local, err := opts.Caller(opts.Hosts)
	if err != nil {
		return err
	}
	answers := caller.ask(context.Background(), "ralph", "ls", "--format", "json", "--status", opts.Status)
	type hostLoop struct {
		host string
		raw  map[string]json.RawMessage
	}
	var rows []hostLoop
	if local {
		shown, err := opts.listed()
		if err != nil {
			return err
		}
		for _, i := range shown {
			rows = append(rows, hostLoop{remote.Local, toRaw(flatten(i))})
		}
	}
	for i := range answers {
		for _, obj := range decodeRows(&answers[i]) {
			rows = append(rows, hostLoop{answers[i].Host, obj})
		}
	}
	switch opts.Format {
	case "json":
		if err := printJSON(opts.IO, hostRowsJSON(rows, func(r hostLoop) (string, map[string]json.RawMessage) { return r.host, r.raw }, answers)); err != nil {
			return err
		}
	case "names":
		for _, r := range rows {
			fmt.Fprintln(opts.IO.Out, termtext.Line(qualified(r.host, loopRowOf(r.raw).Name)))
		}
	default:
		tw, flush := newTable(opts.IO.Out)
		fmt.Fprintln(tw, "HOST\t"+strings.Join(loopColumns, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, r.host+"\t"+strings.Join(loopRowOf(r.raw).cells(), "\t"))
		}
		for _, a := range answers {
			if a.Err != "" {
				fmt.Fprintf(tw, "%s\t-\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n", a.Host, unreachableOrFailed(a), termtext.Line(a.Err))
			}
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return hostsFailed(opts.IO, answers)
}

// actionTimeout bounds one action of swarm top on a host beyond the
// connect timeout: a kill waits up to 5 s for the agent, then for its
// window and loop.
const actionTimeout = 30 * time.Second

// call runs swarm args on the host called name and returns its stdout;
// an error is one line saying why it failed (ssh's, or the remote
// swarm's error line).
func (c *hostsCaller) call(name string, args ...string) (string, error) {
	i := slices.IndexFunc(c.hosts, func(h remote.Host) bool { return h.Name == name })
	if i < 0 {
		return "", fmt.Errorf("unknown host '%s'", name)
	}
	h := c.hosts[i]
	out, errb := capWriter{max: maxListing}, capWriter{max: maxListing}
	res, err := c.ssh.Run(context.Background(), remote.Call{Host: h, Command: remote.Command(h.SwarmArgv(args...)),
		Stdout: &out, Stderr: &errb, Timeout: c.set.ConnectTimeout + actionTimeout})
	if why := remote.Failure(res, err, errb.b); why != "" {
		return "", fmt.Errorf("%s: unreachable: %s", name, why)
	}
	if res.Code != 0 {
		first, _, _ := strings.Cut(strings.TrimSpace(string(errb.b)), "\n")
		return "", fmt.Errorf("%s: %s", name, termtext.Line(strings.TrimPrefix(first, "swarm: error: ")))
	}
	return string(out.b), nil
}

// topHosts is swarm top's reach to the hosts.
type topHosts struct {
	caller *hostsCaller
	self   string
	root   string
	env    []string
}

// Rows asks every host for its board's rows (swarm top --once --format
// json), in parallel.
func (t *topHosts) Rows() []board.HostRows {
	answers := t.caller.ask(context.Background(), "top", "--once", "--format", "json")
	out := make([]board.HostRows, len(answers))
	for i, a := range answers {
		out[i] = board.HostRows{Host: a.Host}
		if a.Err == "" {
			if err := json.Unmarshal(a.Out, &out[i].Rows); err != nil {
				a.Err = "not a board: " + termtext.Line(err.Error())
			}
		}
		out[i].Err = a.Err
	}
	return out
}

// Run runs a swarm command on a host.
func (t *topHosts) Run(host string, args ...string) (string, error) {
	return t.caller.call(host, args...)
}

// AttachCommand is swarm attach HOST:NAME with this state root, which
// goes through ssh -t.
func (t *topHosts) AttachCommand(host, name string) *exec.Cmd {
	cmd := exec.Command(t.self, "attach", host+":"+name)
	cmd.Env = append(append([]string(nil), t.env...), "SWARM_HOME="+t.root)
	return cmd
}
