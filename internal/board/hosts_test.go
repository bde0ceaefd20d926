package board

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// fakeHosts answers Rows with the next of answers, and records Run.
type fakeHosts struct {
	answers [][]HostRows
	runs    []string
	out     string
}

func (f *fakeHosts) Rows() []HostRows {
	a := f.answers[0]
	if len(f.answers) > 1 {
		f.answers = f.answers[1:]
	}
	return append([]HostRows(nil), a...)
}

func (f *fakeHosts) Run(host string, args ...string) (string, error) {
	f.runs = append(f.runs, host+" "+strings.Join(args, " "))
	if host == "down" {
		return "", errors.New("down: unreachable: Connection refused")
	}
	return f.out, nil
}

func (f *fakeHosts) AttachCommand(host, name string) *exec.Cmd {
	return exec.Command("echo", host, name)
}

// A host that stops answering keeps its last rows, marked stale, under a
// row saying why; rows from a host are made printable.
func TestHostsSourceKeepsStaleRows(t *testing.T) {
	t.Parallel()
	w := Row{Name: "w", Kind: KindLoop, Status: "running", Group: GroupRunning, Monitor: "12"}
	evil := Row{Name: "x\x1b]52;c;cHdu\x07y", Kind: KindTmux, Status: "running\nforged", Group: Group(99), Tags: []string{"t\x1b[2J"}}
	hosts := &fakeHosts{answers: [][]HostRows{
		{{Host: "gpu", Rows: []Row{w, evil}}},
		{{Host: "gpu", Err: "unreachable: connection refused"}},
	}}
	src := &HostsSource{Hosts: hosts}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	rows := Prepare(snap)
	if len(rows) != 2 || rows[0].Key() != "gpu:w" || rows[0].Stale {
		t.Fatalf("first refresh: %+v", rows)
	}
	if r := rows[1]; r.Name != "xy" || r.Status != "running forged" || r.Group != GroupRest || r.Tags[0] != "t" {
		t.Errorf("a host's row not sanitized: %+v", r)
	}
	snap, _ = src.Snapshot()
	rows = Prepare(snap)
	if len(rows) != 3 || rows[0].Kind != KindHost || rows[0].Status != "unreachable" || rows[0].Key() != "" {
		t.Fatalf("second refresh: %+v", rows)
	}
	if !rows[1].Stale || rows[1].Key() != "gpu:w" {
		t.Errorf("the last rows should stay, stale: %+v", rows[1])
	}
	var b bytes.Buffer
	WritePlain(&b, rows)
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "HOST ") || strings.Fields(lines[0])[1] != "NAME" || !strings.HasPrefix(lines[1], "gpu ") ||
		!strings.Contains(lines[1], "unreachable: connection refused") || !strings.HasPrefix(lines[2], "gpu (stale)  w") {
		t.Errorf("plain board:\n%s", b.String())
	}
}

// Actions on HOST:NAME go to the host, as swarm commands.
func TestHostsSourceActsOnTheHost(t *testing.T) {
	t.Parallel()
	hosts := &fakeHosts{out: "paused ralph loop for w\n"}
	src := &HostsSource{Hosts: hosts}
	if s, err := src.Pause("gpu:w"); err != nil || s != "gpu: paused ralph loop for w" {
		t.Errorf("pause: %q %v", s, err)
	}
	src.Kill("gpu:w")
	src.Peek("gpu:w", 7)
	src.Events("gpu:w", 9)
	if _, err := src.Resume("down:w"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("resume on a host that does not answer: %v", err)
	}
	want := []string{"gpu ralph pause w", "gpu kill w", "gpu peek w --lines 7", "gpu ralph logs w --lines 9", "down ralph resume w"}
	if strings.Join(hosts.runs, ",") != strings.Join(want, ",") {
		t.Errorf("runs %q, want %q", hosts.runs, want)
	}
	if _, err := src.Peek("w", 3); err == nil {
		t.Error("a local worker on a board without this machine")
	}
	if cmd := src.AttachCommand("gpu:w"); strings.Join(cmd.Args, " ") != "echo gpu w" {
		t.Errorf("attach: %v", cmd.Args)
	}
}

// With hosts, this machine's rows are "local"; the board keeps the
// selection on HOST:NAME across refreshes.
func TestPrepareLocalRowsWithHosts(t *testing.T) {
	t.Parallel()
	snap := Snapshot{At: time.Now(), Hosts: []HostRows{{Host: "gpu", Rows: []Row{{Name: "w", Kind: KindTmux, Group: GroupRunning}}}}}
	rows := Prepare(snap)
	if len(rows) != 1 || rows[0].Host != "gpu" {
		t.Fatalf("%+v", rows)
	}
	if got := Filter(rows, "gp"); len(got) != 1 {
		t.Errorf("filter by host: %+v", got)
	}
}
