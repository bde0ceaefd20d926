package heartbeat

import (
	"fmt"
	"time"

	"github.com/swarmtools/swarm/internal/duration"
)

// Kind classifies the errors of heartbeat commands.
type Kind int

// Error kinds.
const (
	KindInvalid       Kind = iota // a bad flag value
	KindWorkerMissing             // no such worker
	KindNotTmux                   // the worker is a process worker
	KindAlreadyActive             // start without --force on a live heartbeat
	KindNoHeartbeat               // status, pause, resume of nothing
	KindNotActive                 // pause of a heartbeat that is not active
	KindNotPaused                 // resume of a heartbeat that is not paused
)

// Error is a heartbeat command's failure, with swarm.py's text. Every one
// exits 1. Bare errors are printed on stderr as they are (swarm.py prints
// them without a prefix); the others as "swarm: error: <text>".
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Bare reports whether the message is printed without "swarm: error: ".
func (e *Error) Bare() bool {
	return e.Kind == KindNoHeartbeat || e.Kind == KindNotActive || e.Kind == KindNotPaused
}

func noHeartbeat(name string) error {
	return &Error{KindNoHeartbeat, fmt.Sprintf("No heartbeat found for %s", name)}
}

// Config is what a heartbeat does.
type Config struct {
	Interval time.Duration
	// Expire is how long the heartbeat lives (not counting paused time);
	// zero means until stopped.
	Expire  time.Duration
	Message string
}

// Flags are the raw values of --interval, --expire and --message (or
// spawn's --heartbeat, --heartbeat-expire and --heartbeat-message).
type Flags struct {
	Interval, Expire, Message string
}

// shortInterval: intervals under a minute get swarm.py's warning (an
// agent nudged that often never gets to finish a thought).
const shortInterval = time.Minute

// Parse checks the flags of "heartbeat start" (spawn false) or of spawn's
// --heartbeat flags (spawn true), with swarm.py's messages for each. It
// returns the warning to print ("" for none) for a very short interval.
// Call it before anything is created: spawn must not leave a worker behind
// because its heartbeat flags were wrong.
func Parse(f Flags, spawn bool) (Config, string, error) {
	ivName, exName := "interval", "expire"
	short := "very short interval (%s), consider using at least 1m"
	if spawn {
		ivName, exName = "heartbeat interval", "heartbeat-expire"
		short = "very short heartbeat interval (%s), consider using at least 1m"
	}
	var c Config
	iv, err := duration.Parse(f.Interval)
	if err != nil || iv <= 0 {
		return c, "", &Error{KindInvalid, fmt.Sprintf("invalid %s '%s'", ivName, f.Interval)}
	}
	c.Interval = iv
	if f.Expire != "" {
		ex, err := duration.Parse(f.Expire)
		if err != nil || ex <= 0 {
			return c, "", &Error{KindInvalid, fmt.Sprintf("invalid %s '%s'", exName, f.Expire)}
		}
		c.Expire = ex
	}
	c.Message = f.Message
	if c.Message == "" {
		// swarm.py would match an empty message on every screen and
		// never beat.
		return c, "", &Error{KindInvalid, "heartbeat message cannot be empty"}
	}
	warn := ""
	if iv < shortInterval {
		warn = fmt.Sprintf(short, f.Interval)
	}
	return c, warn, nil
}

// StartedMessage is what "heartbeat start" prints:
// "Heartbeat started for W (every 4h, expires in 24h)".
func StartedMessage(name string, c Config) string {
	return fmt.Sprintf("Heartbeat started for %s (%s)", name, c.describe())
}

// SpawnedMessage is what spawn prints after its own line:
// "heartbeat started (every 4h, expires in 24h)".
func SpawnedMessage(c Config) string {
	return fmt.Sprintf("heartbeat started (%s)", c.describe())
}

func (c Config) describe() string {
	if c.Expire > 0 {
		return fmt.Sprintf("every %s, expires in %s", words(c.Interval), words(c.Expire))
	}
	return fmt.Sprintf("every %s, no expiration", words(c.Interval))
}

// words is duration.Words, except that a sub-second part (test intervals
// such as 500ms) is shown rather than rounded away.
func words(d time.Duration) string {
	if d%time.Second != 0 && d < time.Minute {
		return d.String()
	}
	return duration.Words(d)
}
