package agent

import (
	"regexp"
)

// Aider returns the profile of aider (PyPI aider-chat, command aider), a
// line-oriented chat on prompt_toolkit and rich. No screen of it was
// captured: the patterns are the strings of Aider-AI/aider at 5dc9490b
// (0.86.3.dev; aider/io.py, aider/waiting.py, aider/coders/base_coder.py,
// aider/exceptions.py, aider/main.py; testdata/aider/README.md), and the
// test screens are written after them:
//
//   - working: while it waits for the model's first token a spinner line
//     "░█        Waiting for <model>"; while the reply streams in nothing
//     marks it as working, but no bare prompt shows either, so it is
//     neither working nor idle (Unknown), never falsely idle;
//   - idle: the bare input prompt on its own line, "> " ("ask> ",
//     "architect> ", "multi> " by mode; tmux drops the trailing space);
//     the line keeps the text once it is sent, so history is not bare;
//   - a turn ends with "Tokens: 4.2k sent, 312 received. Cost: ...";
//   - an API error after its retries: litellm's "litellm.XError: ..."
//     and aider's own sentence for it ("The API provider's servers are
//     down or overloaded.");
//   - a rate limit after its retries (about a minute of them): "The API
//     provider has rate limited you. Try again later or check your
//     quotas." It gives no reset time;
//   - its questions end the screen: "... (Y)es/(N)o [Yes]:".
var Aider = register("aider", []string{"aider"}, func() *Profile {
	return &Profile{
		// Lines that start a message or a prompt: an error above the last one
		// has been answered past.
		MessageStart: []*regexp.Regexp{regexp.MustCompile(`^Tokens: .* sent, .* received`)},
		Source:       "the Aider-AI/aider sources at 5dc9490b (0.86.3.dev), not captured screens: see internal/agent/testdata/aider/README.md",
		Working: []*regexp.Regexp{
			// waiting.py: a two-glyph scanner (░█, or =# without unicode)
			// bouncing in ten columns, then the text.
			regexp.MustCompile(`^\s*[░█#=]{2}\s+Waiting for \S`),
		},
		InputBox: []*regexp.Regexp{
			// io.py get_input: edit format, "multi", then "> ".
			regexp.MustCompile(`^(?:[a-z][\w-]*(?: multi)?|multi)?>\s*$`),
		},
		TurnDone: []*regexp.Regexp{
			// base_coder.py show_usage_report.
			regexp.MustCompile(`^Tokens: \S+ sent, .*\breceived\.`),
		},
		APIError: []*regexp.Regexp{
			regexp.MustCompile(`^litellm\.[A-Za-z]+(?:Error|Exception)\b`),
			// exceptions.py: aider's sentences for litellm's errors.
			regexp.MustCompile(`^The API provider's servers are down or overloaded\.`),
			regexp.MustCompile(`^The API provider is not able to authenticate you\.`),
			regexp.MustCompile(`^The API provider timed out without returning a response\.`),
			regexp.MustCompile(`^Permission was denied\. Check your API key`),
			regexp.MustCompile(`^The API provider has refused the request due to a safety policy`),
			regexp.MustCompile(`^Model \S+ has hit a token limit!`),
		},
		Limit: []*regexp.Regexp{
			regexp.MustCompile(`^The API provider has rate limited you\.`),
			regexp.MustCompile(`^Insufficient credits with the API provider\.`),
		},
		Fatal: []Fatal{
			{regexp.MustCompile(`(?i)no llm model was specified and no api keys were provided`),
				"give aider a model and its key: --model NAME plus --env ANTHROPIC_API_KEY=... (or OPENAI_API_KEY, ...)"},
			{regexp.MustCompile(`(?i)unable to proceed without an openrouter api key`),
				"add --env OPENROUTER_API_KEY=..."},
			{regexp.MustCompile(`^aider: error: `),
				"aider rejected its arguments: see aider --help"},
		},
		Dialogs: []DialogPattern{
			// onboarding.py: no model and no key; with --yes-always aider
			// would start the OpenRouter OAuth flow, so it is a login.
			{StuckLogin, regexp.MustCompile(`(?i)login to openrouter or create a free account\?`)},
			// versioncheck.py, then utils.py's "Run pip install?".
			{StuckUpdate, regexp.MustCompile(`(?s)Newer aider version v\S+ is available\..*\(Y\)es/\(N\)o[^\n]*\]:\s*\z`)},
			// io.py confirm_ask: the question is the screen's last line while
			// it waits (an answered one has the answer after the colon).
			{StuckApproval, regexp.MustCompile(`\(Y\)es/\(N\)o[^\n]*\[[^\]\n]*\]:\s*\z`)},
		},
		InputPrefixes: map[string]string{
			"/": "runs a message that starts with '/' as one of its slash commands, not as a prompt",
			"!": "runs a message that starts with '!' in its shell (bash mode): the prompt would run as a shell command",
		},
		ShellPrefix: "!",
		Hints: map[string]string{
			StuckApproval: `start aider with --yes-always (shell commands the model suggests are still never run); its start-up questions are also skipped by --analytics-disable, --no-gitignore, --no-show-release-notes; answer this one with: swarm attach NAME`,
			StuckUpdate:   `start aider with --no-check-update`,
			StuckLogin:    `aider found no model and no API key: pass --model NAME and its key (--env ANTHROPIC_API_KEY=..., OPENAI_API_KEY=..., ...)`,
		},
	}
})
