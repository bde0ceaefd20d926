package agent

// Generic returns the profile of any other command: ready when it shows one
// of the generic ready prompts (internal/ready); it cannot tell working
// from idle, so an iteration ends when the agent exits or its screen stays
// unchanged for the inactivity timeout. Dialogs and setup screens are still
// never answered.
var Generic = register("generic", []string{"sh", "bash", "zsh", "fish", "dash"}, func() *Profile {
	return &Profile{
		Source: "the generic ready patterns of docs/agents.md",
	}
})
