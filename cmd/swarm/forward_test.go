package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// planForward reads a command line as the command would: which host it
// names (--host, HOST:NAME) and the command line the host's swarm gets.
func TestPlanForward(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		host    string // "": runs here
		remote  string // the host's command line, words joined by |
		prompt  string
		timeout time.Duration
		err     string
	}{
		{args: []string{"ls"}},
		{args: []string{"peek", "w"}},
		{args: []string{"version"}},
		{args: []string{"spawn", "--name", "w", "--", "echo", "a:b"}},
		{args: []string{"send", "--all", "fix: this"}},
		{args: []string{"peek", "--host", "gpu", "w", "-n", "5"}, host: "gpu", remote: "peek|--lines=5|--|w"},
		{args: []string{"peek", "gpu:w"}, host: "gpu", remote: "peek|--|w"},
		{args: []string{"ls", "--host=gpu", "--format", "json"}, host: "gpu", remote: "ls|--format=json"},
		{args: []string{"list", "--host", "gpu"}, host: "gpu", remote: "ls"},
		{args: []string{"send", "gpu:w", "it's $HOME; x"}, host: "gpu", remote: "send|--|w|it's $HOME; x"},
		{args: []string{"send", "gpu:w", "--", "-n"}, host: "gpu", remote: "send|--|w|-n"},
		{args: []string{"kill", "--host", "gpu", "--all", "--connect-timeout", "3s"}, host: "gpu", remote: "kill|--all=true", timeout: 3 * time.Second},
		{args: []string{"attach", "gpu:w"}, host: "gpu", remote: "attach|--|w"},
		{args: []string{"ralph", "wait", "gpu:w", "--timeout", "60"}, host: "gpu", remote: "ralph|wait|--timeout=60|--|w"},
		{args: []string{"heartbeat", "start", "gpu:w", "--interval", "4h"}, host: "gpu", remote: "heartbeat|start|--interval=4h|--|w"},
		{args: []string{"spawn", "--name", "gpu:w", "--tmux", "--env", "K=a b", "--env", "L=c", "--", "claude", "--x", "y:z"}, host: "gpu",
			remote: "spawn|--name=w|--tmux=true|--env=K=a b|--env=L=c|--|claude|--x|y:z"},
		{args: []string{"ralph", "spawn", "--host", "gpu", "--name", "w", "--prompt-file", "P.md", "--no-worktree", "--", "claude"}, host: "gpu",
			remote: "ralph|spawn|--name=w|--no-worktree=true|--|claude", prompt: "P.md"},
		{args: []string{"peek", "--host", "a", "b:w"}, err: "--host a and b:w name different hosts"},
		{args: []string{"peek", "--host", "gpu", "--help"}},
		{args: []string{"peek", "--host", "gpu", "--bogus"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			f := newFactory(&IO{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, t.TempDir())
			fw, err := planForward(newCmdRoot(f, tc.args), tc.args)
			switch {
			case tc.err != "":
				if err == nil || err.Error() != tc.err || fw == nil || fw.cmd.Name() != tc.args[0] {
					t.Errorf("error %v, want %q of %s", err, tc.err, tc.args[0])
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.host == "":
				if fw != nil {
					t.Errorf("goes to %s, want here", fw.host)
				}
				return
			case fw == nil:
				t.Fatalf("runs here, want host %s", tc.host)
			}
			got := strings.Join(append(append([]string{}, fw.words...), fw.args...), "|")
			if fw.host != tc.host || got != tc.remote || fw.prompt != tc.prompt {
				t.Errorf("host %s, remote %q, prompt %q\nwant %s, %q, %q", fw.host, got, fw.prompt, tc.host, tc.remote, tc.prompt)
			}
			want := tc.timeout
			if want == 0 {
				want = 10 * time.Second
			}
			if fw.timeout != want {
				t.Errorf("connect timeout %s, want %s", fw.timeout, want)
			}
		})
	}
}

// --host local runs the command here.
func TestForwardLocal(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	f := newFactory(&IO{In: &bytes.Buffer{}, Out: &out, Err: &errb}, t.TempDir())
	if code := execute(f, []string{"ls", "--host", "local", "--format", "json"}); code != 0 || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("ls --host local: exit %d, %q %q", code, out.String(), errb.String())
	}
}
