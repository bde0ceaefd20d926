package agent

import (
	"context"
	"testing"
	"time"

	"github.com/swarmtools/swarm/internal/ready"
)

// The generic profile's ready screens: Claude Code's and opencode's
// banners and footers (the agent run through npx or a script), input and
// shell prompts; never a dialog or setup screen. (These were
// internal/ready's cases before the agents' screens moved here.)
func TestGenericReady(t *testing.T) {
	readyScreens := []string{
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
	for _, s := range readyScreens {
		if !Generic().Ready(s) {
			t.Errorf("Ready(%q) = false", s)
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
		if Generic().Ready(s) {
			t.Errorf("Ready(%q) = true", s)
		}
	}
}

// Claude Code's setup screens are known to every profile, the generic one
// included, and only by their own wording.
func TestGenericStuck(t *testing.T) {
	cases := map[string]string{
		"Let's get started.\nChoose the text style that looks best with your terminal": StuckTheme,
		"Select login method:":          StuckLogin,
		"Paste code here if prompted >": StuckOAuth,
	}
	for s, want := range cases {
		for _, name := range Names() {
			p, _ := Lookup(name)
			if got, ok := p.StuckKind(s); !ok || got != want {
				t.Errorf("%s: Stuck(%q) = %q %v", name, s, got, ok)
			}
		}
	}
	for _, s := range []string{"> ready", "Add a settings page where users can select a theme", "log in with Claude to continue the OAuth flow", "dark mode (default)"} {
		if _, ok := Generic().StuckKind(s); ok {
			t.Errorf("Stuck(%q) = true", s)
		}
	}
}

// ready.Wait with the generic profile's judgement reports the setup screen
// it passes and waits for the banner.
func TestGenericWait(t *testing.T) {
	screens := []string{"", "Loading", "Select login method:", "Claude Code v2.0.76"}
	i := 0
	var stuck []string
	res, err := ready.Wait(context.Background(), func() (string, bool, error) {
		s := screens[i]
		if i < len(screens)-1 {
			i++
		}
		return s, false, nil
	}, ready.WaitOptions{Interval: time.Millisecond, Timeout: time.Second,
		IsReady: func(s string) bool { return Generic().Ready(s) }, Stuck: Generic().StuckKind,
		OnStuck: func(k string) { stuck = append(stuck, k) }})
	if err != nil || !res.Ready || len(stuck) != 1 || stuck[0] != StuckLogin {
		t.Fatalf("Wait = %+v %v %v", res, err, stuck)
	}
}

// Compacting is seen on any screen that shows it, by its exact words.
func TestCompacting(t *testing.T) {
	for s, want := range map[string]bool{
		"✻ Compacting conversation… (esc to interrupt)": true,
		"Compacting conversation":                       true,
		"compacting conversation":                       false,
		"Compacting the conversation":                   false,
		"":                                              false,
	} {
		if got := Compacting(s); got != want {
			t.Errorf("Compacting(%q) = %v, want %v", s, got, want)
		}
	}
}
