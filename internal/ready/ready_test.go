package ready

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestIsReady(t *testing.T) {
	ready := []string{
		"Welcome\n Claude Code v2.0.76\n",
		"> ",
		">",
		"some output\n❯ \n\n\n",
		"$ ",
		">>> ",
		"  ⏵⏵ bypass permissions on (shift+tab to cycle)",
		"opencode v0.3.1",
		"tab switch agent   ctrl+p commands",
		"│ > │",
		"\x1b[1mClaude Code v2.1.0\x1b[0m",
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
		"Choose the text style that looks best with your terminal\n> 1. Dark mode",
		"Select login method:\n❯ 1. Claude account",
		"Paste code here if prompted >",
		"$100 spent",
		"  ❯ 1. No, exit\n    2. Yes, I accept\n  Enter to confirm · Esc to cancel",
		"WARNING: Claude Code running in Bypass Permissions mode\n❯ 1. No, exit",
		" ❯ 1. Yes, I trust this folder\n   2. No, exit",
		"Detected a custom API key in your environment\n  ❯ 2. No (recommended)",
		"❯ \n  bypass permissions on (shift+tab to cycle)\n  Not logged in · Run /login",
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

func TestStuck(t *testing.T) {
	cases := map[string]string{
		"Let's get started.\nChoose the text style that looks best with your terminal": StuckTheme,
		"Select login method:":          StuckLogin,
		"Paste code here if prompted >": StuckOAuth,
	}
	for s, want := range cases {
		if got, ok := Stuck(s); !ok || got != want {
			t.Errorf("Stuck(%q) = %q %v", s, got, ok)
		}
	}
	for _, s := range []string{"> ready", "Add a settings page where users can select a theme", "log in with Claude to continue the OAuth flow", "dark mode (default)"} {
		if _, ok := Stuck(s); ok {
			t.Errorf("Stuck(%q) = true", s)
		}
	}
}

func TestWait(t *testing.T) {
	screens := []string{"", "Loading", "Select login method:", "Claude Code v2.0.76"}
	i := 0
	var stuck []string
	res, err := Wait(context.Background(), func() (string, bool, error) {
		s := screens[i]
		if i < len(screens)-1 {
			i++
		}
		return s, false, nil
	}, WaitOptions{Interval: time.Millisecond, Timeout: time.Second, OnStuck: func(k string) { stuck = append(stuck, k) }})
	if err != nil || !res.Ready || len(stuck) != 1 || stuck[0] != StuckLogin {
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
