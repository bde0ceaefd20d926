package ralph

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/swarmtools/swarm/internal/ready"
	"github.com/swarmtools/swarm/internal/state"
	"github.com/swarmtools/swarm/internal/termtext"
)

// SignalKind is a completion signal found in an agent's output.
type SignalKind int

// Signal kinds, in precedence order: when several appear in one iteration
// the earliest kind in this list wins.
const (
	SignalNone SignalKind = iota
	SignalComplete
	SignalDonePattern
	SignalBlocked
	SignalDecide
)

// Signal is one stop signal with its detail (the BLOCKED reason, the
// DECIDE question, or the text the done pattern matched).
type Signal struct {
	Kind   SignalKind
	Detail string
}

// Reason is the exit_reason a signal ends a loop with.
func (k SignalKind) Reason() state.ExitReason {
	switch k {
	case SignalComplete:
		return ReasonComplete
	case SignalDonePattern:
		return ReasonDonePattern
	case SignalBlocked:
		return ReasonBlocked
	case SignalDecide:
		return ReasonDecide
	}
	return ""
}

// DetectorConfig says what to look for.
type DetectorConfig struct {
	DonePattern *regexp.Regexp // nil: none
	Promise     bool           // look for <promise> tags
	Word        string         // the COMPLETE word (default "COMPLETE")
	// Redrawn: the text is a terminal program's output stream, where a
	// redraw may rewrite only the cells that changed (Claude Code 2.1.332
	// redrew its expanded echo of a pasted prompt so: "check\x1b[34Gd,
	// print <promise>COMPLETE</promise>"), so the context an echo is told
	// by can be missing. A promise tag the prompt also holds then counts
	// only once Confirm finds it on the rendered screen.
	Redrawn bool
}

// Detector finds completion signals in the raw output stream of one
// iteration (what the agent wrote to its terminal after the prompt was
// delivered). It strips terminal escape sequences and keeps a window of
// recent text, so a tag that arrives in two writes, or is wrapped over two
// screen lines, is still found.
//
// Agents often show the prompt they received (Claude Code prints it in its
// transcript). A match whose surrounding text is also the surrounding text
// in the delivered prompt is such an echo and is ignored; see isEcho.
type Detector struct {
	cfg   DetectorConfig
	echo  string // normalized delivered prompt
	carry []byte // raw bytes after the last newline, not yet processed
	text  string // stripped text window
	base  int64  // stream offset of text[0]
	from  int64  // stream offset where matches may start (after Prime)
	seen  map[int64]bool

	found [SignalDecide + 1]*Signal
	tasks []string
	// suspect are promise tags of a Redrawn stream that the prompt also
	// holds, not yet confirmed (Confirm); suspects counts every one seen.
	suspect  [SignalDecide + 1]*Signal
	suspects int
}

// window bounds the retained text: enough context for echo checks and for
// a tag split across writes, small enough to scan every poll.
const (
	window     = 16 << 10
	contextLen = 24 // runes of context on each side for the echo check
	minContext = 12
	maxCarry   = 64 << 10
)

// taskPattern is a "TASK-ID: DONE" line; compiled on first use (most
// commands never read an agent's output).
var taskPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:\s*DONE$`)
})

// NewDetector returns a detector for one delivery of prompt.
func NewDetector(cfg DetectorConfig, prompt string) *Detector {
	if cfg.Word == "" {
		cfg.Word = "COMPLETE"
	}
	return &Detector{cfg: cfg, echo: normalize(prompt), seen: map[int64]bool{}}
}

// Prime gives the detector the output just before the prompt was
// delivered (the agent's echo of the paste, typically). It is used only as
// context for telling an echo of the prompt from the agent's own words,
// never searched for signals itself.
func (d *Detector) Prime(raw []byte) {
	s := ready.StripANSI(string(raw))
	s = strings.ReplaceAll(s, "\r", "")
	d.text += s
	d.from = d.base + int64(len(d.text))
}

// Feed processes more raw output. Complete lines are processed now; a
// trailing partial line waits for its end (or Flush), so an escape
// sequence is never cut in half.
func (d *Detector) Feed(raw []byte) {
	d.carry = append(d.carry, raw...)
	i := bytes.LastIndexByte(d.carry, '\n')
	if i < 0 {
		if len(d.carry) < maxCarry {
			return
		}
		i = len(d.carry) - 1
	}
	chunk := d.carry[:i+1]
	d.carry = append([]byte(nil), d.carry[i+1:]...)
	d.process(chunk, false)
}

// Flush processes everything fed so far and judges every match with the
// context there is: at the end of the stream, or when the agent has gone
// quiet and no more context is coming. Feeding may continue afterwards.
func (d *Detector) Flush() {
	chunk := d.carry
	d.carry = nil
	d.process(chunk, true)
}

func (d *Detector) process(chunk []byte, final bool) {
	if len(chunk) > 0 {
		s := ready.StripANSI(string(chunk))
		s = strings.ReplaceAll(s, "\r", "")
		d.text += s
	}
	d.scan(final)
	if len(d.text) > window {
		cut := len(d.text) - window
		for cut < len(d.text) && !utf8.RuneStart(d.text[cut]) {
			cut++
		}
		d.text = d.text[cut:]
		d.base += int64(cut)
	}
}

func (d *Detector) scan(final bool) {
	if d.cfg.Promise {
		for _, m := range findTags(d.text) {
			key := d.base + int64(m[0])
			if d.seen[key] || key < d.from {
				continue
			}
			switch d.judge(m[0], m[1], final) {
			case real:
				d.seen[key] = true
				d.addTag(d.text[m[2]:m[3]], d.cfg.Redrawn && d.inPrompt(d.text[m[0]:m[1]]))
			case echo:
				d.seen[key] = true
			}
		}
	}
	if d.cfg.DonePattern != nil {
		for _, m := range d.cfg.DonePattern.FindAllStringIndex(d.text, -1) {
			key := -(d.base + int64(m[0])) - 1 // own key space: tags use >= 0
			if m[0] == m[1] || d.seen[key] || d.base+int64(m[0]) < d.from {
				continue
			}
			switch d.judge(m[0], m[1], final) {
			case real:
				d.seen[key] = true
				d.add(Signal{Kind: SignalDonePattern, Detail: termtext.Line(d.text[m[0]:m[1]])})
			case echo:
				d.seen[key] = true
			}
		}
	}
}

const (
	openTag    = "<promise>"
	closeTag   = "</promise>"
	maxTagBody = 600
)

// findTags returns the <promise>...</promise> tags in text as [start, end,
// body start, body end]. A stray "<promise>" before a real tag does not
// swallow it (the opening nearest the closing counts), and a body longer
// than maxTagBody is not a tag. (A plain scan: the equivalent regexp with
// a bounded repetition costs milliseconds to compile at every start.)
func findTags(text string) [][4]int {
	var out [][4]int
	for i := 0; ; {
		o := strings.Index(text[i:], openTag)
		if o < 0 {
			return out
		}
		o += i
		body := o + len(openTag)
		c := strings.Index(text[body:], closeTag)
		if c < 0 {
			return out
		}
		c += body
		if k := strings.LastIndex(text[body:c], openTag); k >= 0 {
			o = body + k
			body = o + len(openTag)
		}
		if c-body <= maxTagBody {
			out = append(out, [4]int{o, c + len(closeTag), body, c})
		}
		i = c + len(closeTag)
	}
}

type verdict int

const (
	undecided verdict = iota
	real
	echo
)

// judge decides whether the match text[a:b] is the agent's own output or
// an echo of the prompt (agents such as Claude Code show the prompt they
// received in their transcript).
//
// The match is an echo when the delivered prompt contains the same text
// with the same context: the output just before the match agrees with the
// prompt just before its occurrence there, and likewise after, as far as
// the prompt has context on each side (a tag at the very end of the prompt
// has none after it). Text is compared normalized (no whitespace or
// decoration), so an echo the agent re-wrapped, indented or framed still
// agrees. With too little context to tell, the match counts as the agent's.
// While the context after the match may still grow, a match that looks like
// an echo stays undecided until more output, or the end, settles it.
func (d *Detector) judge(a, b int, final bool) verdict {
	m := normalize(d.text[a:b])
	if d.echo == "" || m == "" {
		return real
	}
	before := []rune(lastRunes(normalize(d.text[max(0, a-400):a]), contextLen))
	after := []rune(firstRunes(normalize(d.text[b:min(len(d.text), b+400)]), contextLen))
	afterFinal := final || len(after) >= contextLen
	result := real
	for off := 0; ; {
		i := strings.Index(d.echo[off:], m)
		if i < 0 {
			break
		}
		p := off + i
		off = p + 1
		pb := []rune(d.echo[:p])
		pa := []rune(d.echo[p+len(m):])
		k1 := min(len(before), len(pb), contextLen)
		k2 := min(len(after), len(pa), contextLen)
		if string(before[len(before)-k1:]) != string(pb[len(pb)-k1:]) || string(after[:k2]) != string(pa[:k2]) {
			continue
		}
		// Agreement so far. Could more output still change the verdict?
		moreAfter := !afterFinal && k2 < min(len(pa), contextLen)
		if k1+k2 >= minContext {
			if moreAfter {
				result = undecided
				continue
			}
			return echo
		}
		if moreAfter {
			result = undecided
		}
	}
	return result
}

// inPrompt reports whether the delivered prompt holds the tag (compared
// normalized, as echoes are).
func (d *Detector) inPrompt(tag string) bool {
	n := normalize(tag)
	return n != "" && strings.Contains(d.echo, n)
}

// addTag records a tag's signal, or, for a suspect (see Redrawn), keeps
// it aside for Confirm.
func (d *Detector) addTag(content string, suspect bool) {
	// The reason or question goes to the state, the log, hooks and every
	// terminal that shows them: printable text only.
	content = termtext.Line(content)
	c := strings.Join(strings.Fields(content), " ")
	squeezed := strings.Join(strings.Fields(content), "")
	add := d.add
	if suspect {
		add = func(s Signal) {
			d.suspects++
			if d.found[s.Kind] == nil && d.suspect[s.Kind] == nil {
				d.suspect[s.Kind] = &s
			}
		}
	}
	switch {
	case c == d.cfg.Word || squeezed == d.cfg.Word:
		add(Signal{Kind: SignalComplete})
	case hasPrefixFold(squeezed, "BLOCKED:"):
		add(Signal{Kind: SignalBlocked, Detail: afterColon(c)})
	case hasPrefixFold(squeezed, "DECIDE:"):
		add(Signal{Kind: SignalDecide, Detail: afterColon(c)})
	default:
		if m := taskPattern().FindStringSubmatch(c); m != nil {
			for _, t := range d.tasks {
				if t == m[1] {
					return
				}
			}
			d.tasks = append(d.tasks, m[1])
		}
	}
}

func (d *Detector) add(s Signal) {
	if d.found[s.Kind] == nil {
		d.found[s.Kind] = &s
	}
}

// Stop returns the strongest stop signal seen so far.
func (d *Detector) Stop() (Signal, bool) {
	for k := SignalComplete; k <= SignalDecide; k++ {
		if d.found[k] != nil {
			return *d.found[k], true
		}
	}
	return Signal{}, false
}

// Found returns the signal of kind k seen so far (confirmed, for a
// suspect tag).
func (d *Detector) Found(k SignalKind) (Signal, bool) {
	if k < SignalComplete || k > SignalDecide || d.found[k] == nil {
		return Signal{}, false
	}
	return *d.found[k], true
}

// Suspects counts the promise tags seen that wait for Confirm (each
// occurrence: a redraw that writes the echo's tag again counts again);
// 0 when none is unconfirmed.
func (d *Detector) Suspects() int {
	for k := SignalComplete; k <= SignalDecide; k++ {
		if d.suspect[k] != nil && d.found[k] == nil {
			return d.suspects
		}
	}
	return 0
}

// Confirm judges the suspect tags on the screen as a terminal rendered
// it (the pane with its history, this session's only): there every echo
// of the prompt has its context, however the program redrew it. A
// suspect kind the rendered text shows as the agent's own counts from
// now on. It reports whether one did.
func (d *Detector) Confirm(rendered string) bool {
	r := &Detector{cfg: d.cfg, echo: d.echo, seen: map[int64]bool{}}
	r.cfg.Redrawn, r.cfg.DonePattern = false, nil
	r.Feed([]byte(rendered))
	r.Flush()
	confirmed := false
	for k := SignalComplete; k <= SignalDecide; k++ {
		if d.suspect[k] != nil && d.found[k] == nil && r.found[k] != nil {
			d.found[k], confirmed = r.found[k], true
		}
	}
	return confirmed
}

// Tasks returns the task ids reported done (<promise>ID:DONE</promise>).
func (d *Detector) Tasks() []string { return append([]string(nil), d.tasks...) }

func afterColon(s string) string {
	_, rest, _ := strings.Cut(s, ":")
	return strings.TrimSpace(rest)
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// normalize drops whitespace and the decoration agents draw around text
// (box drawing, bullets, prompt markers), so the same words compare equal
// however a terminal program wrapped or framed them.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range ready.StripANSI(s) {
		if unicode.IsSpace(r) || decoration(r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func decoration(r rune) bool {
	switch {
	case r == '>' || r == '|':
		return true
	case r >= 0x2300 && r <= 0x23FF: // misc technical (⎿ ⏺)
		return true
	case r >= 0x2500 && r <= 0x25FF: // box drawing, blocks, shapes (│ ● ■)
		return true
	case r >= 0x2700 && r <= 0x27BF: // dingbats (❯)
		return true
	case r == '•' || r == '·' || r == '…':
		return true
	}
	return false
}

func lastRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[len(r)-n:])
}

func firstRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
