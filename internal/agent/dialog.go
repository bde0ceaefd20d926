package agent

import (
	"regexp"

	"github.com/swarmtools/swarm/internal/prefilter"
	"github.com/swarmtools/swarm/internal/ready"
)

// Dialog kinds of other agents than Claude Code, beside the ready.Stuck*
// ones: each has its own fix, so each has its own hint.
const (
	// StuckApproval: a tool call or command waits for a human's yes.
	StuckApproval = "approval prompt"
	// StuckUpdate: the agent offers to update itself before it starts.
	StuckUpdate = "update prompt"
	// StuckLimitMenu: a usage limit, shown as a menu of ways on (switch
	// model, keep trying, stop); its default choice is not the loop's
	// to make.
	StuckLimitMenu = "usage limit menu"
)

// DialogPattern is one of an agent's own dialogs: Kind names it, Re
// matches the ANSI-stripped screen (multi-line: use (?m) for ^ and $).
type DialogPattern struct {
	Kind string
	Re   *regexp.Regexp
}

// Stuck returns the kind of dialog or menu on screen and, for the
// agent's own, the line that shows it: the agent's own are tried first
// (their kinds name them more exactly), then the generic ones. Ready
// detection should ask this rather than ready.Stuck, which knows only
// Claude Code's and the generic dialogs.
func (p *Profile) Stuck(screen string) (kind, line string, ok bool) {
	t := prefilter.NewText(ready.StripANSI(screen))
	for _, d := range p.Dialogs {
		if loc := prefilter.FindIndex(d.Re, t); loc != nil {
			return d.Kind, ready.LineAt(t.String(), loc[0]), true
		}
	}
	return ready.StuckIn(t)
}

// StuckKind is Stuck without the line, for ready.WaitOptions.
func (p *Profile) StuckKind(screen string) (string, bool) {
	kind, _, ok := p.Stuck(screen)
	return kind, ok
}

// WithArticle says a dialog kind with its article: "an API key dialog",
// "a usage limit menu". The kinds are few and fixed (ready.Stuck* and the
// ones above), so each is written out.
func WithArticle(kind string) string {
	if s, ok := kindPhrases[kind]; ok {
		return s
	}
	return "a " + kind
}

var kindPhrases = map[string]string{
	ready.StuckTheme:       "a " + ready.StuckTheme,
	ready.StuckLogin:       "a " + ready.StuckLogin,
	ready.StuckOAuth:       "an " + ready.StuckOAuth,
	ready.StuckTrust:       "a " + ready.StuckTrust,
	ready.StuckAPIKey:      "an " + ready.StuckAPIKey,
	ready.StuckBypass:      "a " + ready.StuckBypass,
	ready.StuckNotLoggedIn: `a "` + ready.StuckNotLoggedIn + `" screen`,
	ready.StuckMenu:        "a " + ready.StuckMenu,
	StuckApproval:          "an " + StuckApproval,
	StuckUpdate:            "an " + StuckUpdate,
	StuckLimitMenu:         "a " + StuckLimitMenu,
}
