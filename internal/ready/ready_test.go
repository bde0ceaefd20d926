package ready

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Generic ready screens: input and shell prompts. An agent's own
// banners and dialogs are its profile's (internal/agent TestGenericReady
// has these cases with Claude Code's and opencode's screens too).
func TestIsReady(t *testing.T) {
	ready := []string{
		"> ",
		">",
		"some output\n❯ \n\n\n",
		"$ ",
		">>> ",
		"│ > │",
		"\x1b[1m❯\x1b[0m",
		"I will select a theme for the settings page\n> ",
		"root@host:/work/p# ",
		"user@box:~/proj$",
		"box% ",
		"PS C:\\> ",
	}
	for _, s := range ready {
		if !IsReady(s) {
			t.Errorf("IsReady(%q) = false", s)
		}
	}
	notReady := []string{
		"",
		"Loading...",
		"a > b",
		"Select login method:\n❯ 1. Claude account",
		"$100 spent",
		"  ❯ 1. No, exit\n    2. Yes, I accept\n  Enter to confirm · Esc to cancel",
		"WARNING: Claude Code running in Bypass Permissions mode\n❯ 1. No, exit",
		" ❯ 1. Yes, I trust this folder\n   2. No, exit",
		"Detected a custom API key in your environment\n  ❯ 2. No (recommended)",
		"Claude Code v2.0.76",
		"<div>",
		"a -> b",
		"x = y ==",
	}
	for _, s := range notReady {
		if IsReady(s) {
			t.Errorf("IsReady(%q) = true", s)
		}
	}
}

// Stuck knows generic menus (a numbered choice under a cursor, a confirm
// footer) and says the menu's question; an agent's own dialogs are its
// profile's (internal/agent TestGenericStuck).
func TestStuck(t *testing.T) {
	cases := map[string]string{
		"Do you want to proceed?\n❯ 1. Yes\n  2. No":             "Do you want to proceed?",
		"Pick a model\n\n › 2. gpt-5\n":                          "Pick a model",
		"Some list\n  Enter to confirm · Esc to cancel":          "Some list",
		"│ Which one?\n│ ────────\n│ ❯ 1. This one\n│   2. That": "Which one?",
	}
	for s, want := range cases {
		if kind, line, ok := StuckLine(s); !ok || kind != StuckMenu || line != want {
			t.Errorf("StuckLine(%q) = %q %q %v, want the menu and %q", s, kind, line, ok, want)
		}
	}
	for _, s := range []string{"> ready", "Add a settings page where users can select a theme", "log in with Claude to continue the OAuth flow", "dark mode (default)", "Select login method:", "1. first\n2. second"} {
		if _, ok := Stuck(s); ok {
			t.Errorf("Stuck(%q) = true", s)
		}
	}
}

func TestWait(t *testing.T) {
	screens := []string{"", "Loading", "Log in?\n❯ 1. Yes", "user@box:~$"}
	i := 0
	var stuck []string
	res, err := Wait(context.Background(), func() (string, bool, error) {
		s := screens[i]
		if i < len(screens)-1 {
			i++
		}
		return s, false, nil
	}, WaitOptions{Interval: time.Millisecond, Timeout: time.Second, OnStuck: func(k string) { stuck = append(stuck, k) }})
	if err != nil || !res.Ready || len(stuck) != 1 || stuck[0] != StuckMenu {
		t.Fatalf("Wait = %+v %v %v", res, err, stuck)
	}
	res, _ = Wait(context.Background(), func() (string, bool, error) { return "silent", false, nil }, WaitOptions{Interval: time.Millisecond, Timeout: 20 * time.Millisecond})
	if res.Ready {
		t.Error("silent screen ready")
	}
	res, _ = Wait(context.Background(), func() (string, bool, error) { return "", true, nil }, WaitOptions{Interval: time.Millisecond, Timeout: time.Second})
	if !res.Dead {
		t.Error("gone not reported")
	}
	_, err = Wait(context.Background(), func() (string, bool, error) { return "", false, errors.New("x") }, WaitOptions{Interval: time.Millisecond, Timeout: time.Second})
	if err == nil {
		t.Error("error swallowed")
	}
}

func TestContextPercent(t *testing.T) {
	cases := []struct {
		screen string
		want   int
		ok     bool
	}{
		{"line\nContext: 85%", 85, true},
		{"Context left until auto-compact: 12%", 88, true},
		{"ctx 40% used", 40, true},
		{"45% context used", 45, true},
		{"Context: 85%\n\n\nx\ny\nz", 0, false}, // not in the last 3 lines
		{"100% done", 0, false},
		{"context 999%", 0, false},
	}
	for _, c := range cases {
		got, ok := ContextPercent(c.screen)
		if got != c.want || ok != c.ok {
			t.Errorf("ContextPercent(%q) = %d %v; want %d %v", c.screen, got, ok, c.want, c.ok)
		}
	}
}

func FuzzIsReady(f *testing.F) {
	for _, s := range []string{"> ", "Claude Code v1", "\x1b[31m❯\x1b[0m", "Select login method"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, stuck := Stuck(s); stuck && IsReady(s) {
			t.Fatalf("stuck screen reported ready: %q", s)
		}
		ContextPercent(s)
	})
}

func TestWaitProgressAndCustomReadiness(t *testing.T) {
	var waited []time.Duration
	calls := 0
	res, err := Wait(context.Background(), func() (string, bool, error) {
		calls++
		if calls == 40 {
			return "custom ok", false, nil
		}
		return "> looks ready to the default matcher", false, nil
	}, WaitOptions{
		Interval: time.Millisecond, Timeout: 5 * time.Second,
		IsReady:  func(s string) bool { return s == "custom ok" },
		Progress: func(d time.Duration) { waited = append(waited, d) }, ProgressFirst: 5 * time.Millisecond, ProgressEvery: 5 * time.Millisecond,
	})
	if err != nil || !res.Ready || calls != 40 {
		t.Fatalf("res %+v err %v calls %d", res, err, calls)
	}
	if len(waited) == 0 || waited[0] < 5*time.Millisecond {
		t.Fatalf("progress %v", waited)
	}
}
