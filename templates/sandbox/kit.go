// Package sandbox holds the files of `swarm init --with-sandbox`: a script
// that runs the agent in a Docker container, the image it runs, network
// setup and teardown scripts, a runbook and a starter prompt. They are
// embedded so the swarm binary is all a user installs; internal/sandbox
// writes them into a project.
package sandbox

import "embed"

// Files holds the kit, one file per name, as written into a project.
//
//go:embed sandbox.sh Dockerfile.sandbox setup-sandbox-network.sh teardown-sandbox-network.sh ORCHESTRATOR.md PROMPT.md
var Files embed.FS
