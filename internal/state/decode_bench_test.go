package state

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// BenchmarkDecodeRegistry decodes a registry of 500 tmux workers, as
// swarm ls does (go test -run XXX -bench DecodeRegistry ./internal/state).
func BenchmarkDecodeRegistry(b *testing.B) {
	reg := Registry{}
	for i := range 500 {
		name := fmt.Sprintf("w%d", i)
		reg.Workers = append(reg.Workers, Worker{Name: name, Status: StatusRunning,
			Cmd: []string{"claude", "--dangerously-skip-permissions"}, Started: Timestamp{Time: time.Now()}, Cwd: "/home/user/project",
			Tmux:     &TmuxInfo{Session: "swarm-06acc0e1", Window: name, Socket: NullString("swarm")},
			Metadata: map[string]any{"window_id": fmt.Sprintf("@%d", i), "window_token": "tok-" + name}})
	}
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if got, bad, err := decodeRegistry(data); err != nil || len(bad) != 0 || len(got.Workers) != 500 {
			b.Fatalf("%d workers, %d set aside, %v", len(got.Workers), len(bad), err)
		}
	}
}
