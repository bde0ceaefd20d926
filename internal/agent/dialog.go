package agent

import (
	"regexp"

	"github.com/swarmtools/swarm/internal/prefilter"
	"github.com/swarmtools/swarm/internal/ready"
)

// Dialog kinds beside the generic ready.StuckMenu: each has its own fix,
// so each has its own hint. A dialog is reported, never answered by
// pressing keys: the default choice of several of them does harm (Claude
// Code's API-key dialog rejects the key for good; its bypass warning
// exits).
const (
	StuckTheme       = "theme picker"
	StuckLogin       = "login method picker"
	StuckOAuth       = "OAuth code prompt"
	StuckTrust       = "folder trust dialog"
	StuckAPIKey      = "API key dialog"
	StuckBypass      = "bypass permissions warning"
	StuckNotLoggedIn = "not logged in"
	// StuckApproval: a tool call or command waits for a human's yes.
	StuckApproval = "approval prompt"
	// StuckUpdate: the agent offers to update itself before it starts.
	StuckUpdate = "update prompt"
	// StuckLimitMenu: a usage limit, shown as a menu of ways on (switch
	// model, keep trying, stop); its default choice is not the loop's
	// to make.
	StuckLimitMenu = "usage limit menu"
	// StuckPermission: the agent asks leave to run a tool, as its hooks
	// report it (Claude Code's PermissionRequest).
	StuckPermission = "permission prompt"
	// StuckQuestion: the agent (an MCP server through it) asks the user
	// a question (Claude Code's elicitation dialog).
	StuckQuestion = "question for the user"
)

// DialogPattern is one of an agent's own dialogs: Kind names it, Re
// matches the ANSI-stripped screen (multi-line: use (?m) for ^ and $).
type DialogPattern struct {
	Kind string
	Re   *regexp.Regexp
}

// Stuck returns the kind of dialog or menu on screen and the line that
// shows it (for a menu, its question): the agent's own dialogs are tried
// first (their kinds name them more exactly), then Claude Code's setup
// screens, which every profile knows (setupDialogs), then a generic menu
// (ready.StuckIn). Ready detection should ask this rather than
// ready.Stuck, which knows only the generic menu.
func (p *Profile) Stuck(screen string) (kind, line string, ok bool) {
	t := prefilter.NewText(ready.StripANSI(screen))
	for _, dialogs := range [][]DialogPattern{p.Dialogs, setupDialogs()} {
		for _, d := range dialogs {
			if loc := p.filters.FindIndex(d.Re, t); loc != nil {
				return d.Kind, ready.LineAt(t.String(), loc[0]), true
			}
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
// "a usage limit menu". The kinds are few and fixed (the ones above and
// ready.StuckMenu), so each is written out.
func WithArticle(kind string) string {
	switch kind {
	case StuckOAuth, StuckAPIKey, StuckApproval, StuckUpdate:
		return "an " + kind
	case StuckNotLoggedIn:
		return `a "` + kind + `" screen`
	}
	return "a " + kind
}
