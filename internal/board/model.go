package board

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/swarmtools/swarm/internal/ralph"
)

// DefaultInterval is the board's refresh period: as often as a loop's
// monitor polls its agent (docs/ralph.md: every 2 s), so the board is as
// fresh as the state it reads.
const DefaultInterval = 2 * time.Second

// defaultDetailLines is how much of a screen or event log the detail
// view asks for before the terminal's size is known.
const defaultDetailLines = 30

// statusTTL is how long a message stays on the status line: long enough
// to read, short enough that an old result is not taken for a new one.
const statusTTL = 5 * time.Second

// view is what the board shows.
type view int

const (
	viewList   view = iota
	viewPeek        // the selected worker's screen
	viewLog         // the selected loop's events
	viewOutput      // an ended loop's last iteration output
	viewDiff        // the selected worker's changes against its base
)

// Options configure a board.
type Options struct {
	Source   Source
	Interval time.Duration
	// Bell rings the terminal bell (nil: never).
	Bell func()
	// Warnings returns the warnings written since it was last called
	// (the manager's, which would otherwise land on the board's screen).
	Warnings func() []string
	// Terminal is the board's terminal, given to swarm attach as its
	// output (nil: Bubble Tea's output).
	Terminal *os.File
}

// Model is the board's Bubble Tea model.
type Model struct {
	opts   Options
	styles styles
	keys   keyMap
	help   help.Model

	rows  []Row // every row, sorted
	shown []Row // the rows that pass the filter
	// table is shown laid out (table(shown)): the header, then a line
	// per row. Laid out when shown changes, not at every frame.
	table []string
	at    time.Time
	err   error // the last refresh's error

	cursor   int
	offset   int    // first shown row on screen
	selected string // the selected row's name, kept across refreshes
	// chosen: the user has moved the selection. Until then it stays on
	// the top row, the worst problem, whatever comes to the top.
	chosen bool

	view     view
	target   string // the worker of the peek, log or output view
	detail   string
	detTitle string // the detail's title, when its read says more
	detErr   error
	filter   string
	editing  bool   // typing the filter
	confirm  string // the worker a kill waits to be confirmed for

	status    string
	statusErr bool
	// statusSeq counts the messages shown: a message's expiry clears
	// the status line only if no newer message replaced it.
	statusSeq int

	width, height int
	loading       bool
	// detailReads counts the peek or log reads under way: a tick starts
	// none while one is (a slow tmux server must not pile them up).
	detailReads int
	// after starts the clock: tea.Tick, or a test's stand-in.
	after func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
	// active holds the loops that had not ended at the last refresh, to
	// notice one ending.
	active map[string]bool
	// actions counts pauses, resumes and kills under way: counted when
	// the key is handled, so one the user quits right after is waited
	// for too (a kill cut short would leave its worker half stopped).
	actions sync.WaitGroup
}

// New returns a board model.
func New(o Options) *Model {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	m := &Model{opts: o, styles: newStyles(), keys: newKeyMap(), active: map[string]bool{}, after: tea.Tick}
	m.help = newHelp(m.styles)
	m.table = table(nil, m.lineWidth())
	return m
}

// Messages.
type (
	tickMsg     struct{}
	snapshotMsg struct {
		snap Snapshot
		err  error
	}
	detailMsg struct {
		view   view
		target string
		title  string
		text   string
		err    error
	}
	actionMsg struct {
		text string
		err  error
	}
	// statusExpiredMsg: the message numbered seq has been shown for
	// statusTTL.
	statusExpiredMsg struct{ seq int }
)

// Init reads the first snapshot and starts the clock.
func (m *Model) Init() tea.Cmd {
	m.loading = true
	return tea.Batch(m.fetch(), m.tick())
}

func (m *Model) tick() tea.Cmd {
	return m.after(m.opts.Interval, func(time.Time) tea.Msg { return tickMsg{} })
}

// fetch reads a snapshot off the UI goroutine.
func (m *Model) fetch() tea.Cmd {
	src := m.opts.Source
	return func() tea.Msg {
		s, err := src.Snapshot()
		return snapshotMsg{snap: s, err: err}
	}
}

// fetchDetail reads the peek or log view's text.
func (m *Model) fetchDetail() tea.Cmd {
	if m.view == viewList {
		return nil
	}
	m.detailReads++
	src, v, name, lines := m.opts.Source, m.view, m.target, m.detailLines()
	return func() tea.Msg {
		msg := detailMsg{view: v, target: name}
		switch v {
		case viewPeek:
			msg.text, msg.err = src.Peek(name, lines)
		case viewLog:
			msg.text, msg.err = src.Events(name, lines)
		case viewDiff:
			msg.text, msg.err = src.Diff(name)
		default:
			var iter int
			iter, msg.text, msg.err = src.Output(name, lines)
			if msg.err == nil {
				msg.title = fmt.Sprintf("last output of %s (iteration %d, ended)", name, iter)
			}
		}
		return msg
	}
}

// Update handles a message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.table = table(m.shown, m.lineWidth())
		m.scroll()
		return m, nil
	case tickMsg:
		return m, m.onTick()
	case snapshotMsg:
		return m, m.onSnapshot(msg)
	case detailMsg:
		m.detailReads--
		if msg.view == m.view && msg.target == m.target {
			m.detail, m.detErr = msg.text, msg.err
			if msg.title != "" {
				m.detTitle = msg.title
			}
		}
		return m, nil
	case actionMsg:
		// Show the action's effect now rather than at the next tick.
		return m, tea.Batch(m.setStatus(msg.text, msg.err), m.refresh())
	case statusExpiredMsg:
		if msg.seq == m.statusSeq {
			m.status, m.statusErr = "", false
		}
		return m, nil
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		return m, m.onPaste(msg.Content)
	}
	return m, nil
}

func (m *Model) onTick() tea.Cmd {
	return tea.Batch(m.refresh(), m.refreshDetail(), m.tick())
}

// refreshDetail reads the peek or log view's text again unless a read is
// under way. Opening a view (open) reads at once, whatever reads are under
// way: those are of the view left, of no use to the one opened.
func (m *Model) refreshDetail() tea.Cmd {
	if m.detailReads > 0 {
		return nil
	}
	return m.fetchDetail()
}

// refresh starts a snapshot unless one is under way (a slow tmux server
// must not pile them up).
func (m *Model) refresh() tea.Cmd {
	if m.loading {
		return nil
	}
	m.loading = true
	return m.fetch()
}

func (m *Model) onSnapshot(msg snapshotMsg) tea.Cmd {
	m.loading = false
	m.err = msg.err
	var shown tea.Cmd
	if m.opts.Warnings != nil {
		if w := m.opts.Warnings(); len(w) > 0 {
			shown = m.setStatus("warning: "+w[len(w)-1], nil)
		}
	}
	if msg.err != nil {
		return shown
	}
	m.at = msg.snap.At
	m.rows = Prepare(msg.snap)
	m.applyFilter()
	return tea.Batch(shown, m.bellFor(endedLoops(m.active, msg.snap.Loops)))
}

// endedLoops returns the loops that were active in before and have ended
// now, other than by a kill (a human did that), and records the loops
// active now in before.
func endedLoops(before map[string]bool, loops []*ralph.Info) []*ralph.Info {
	var ended []*ralph.Info
	now := make(map[string]bool, len(loops))
	for _, in := range loops {
		name := in.State.WorkerName
		if in.State.Active() {
			now[name] = true
		} else if before[name] && in.State.ExitReason != ralph.ReasonKilled {
			ended = append(ended, in)
		}
	}
	clear(before)
	for n := range now {
		before[n] = true
	}
	return ended
}

// bellFor rings the bell once if any of the ended loops was spawned with
// --notify (whatever its targets).
func (m *Model) bellFor(ended []*ralph.Info) tea.Cmd {
	if m.opts.Bell == nil {
		return nil
	}
	for _, in := range ended {
		if in.State.Notify || len(in.State.NotifyTo) > 0 {
			// Off the UI goroutine: the write waits for a frame being
			// written.
			bell := m.opts.Bell
			return func() tea.Msg { bell(); return nil }
		}
	}
	return nil
}

// applyFilter recomputes the shown rows and their table, and keeps the
// selection on the same worker when it is still shown (once the user has
// chosen one).
func (m *Model) applyFilter() {
	m.shown = Filter(m.rows, m.filter)
	m.table = table(m.shown, m.lineWidth())
	m.cursor = min(m.cursor, max(0, len(m.shown)-1))
	for i, r := range m.shown {
		if r.Key() == m.selected && m.chosen {
			m.cursor = i
			break
		}
	}
	m.syncSelection()
}

// syncSelection records the row under the cursor as the selection.
func (m *Model) syncSelection() {
	m.selected = ""
	if m.cursor < len(m.shown) {
		m.selected = m.shown[m.cursor].Key()
	}
	m.scroll()
}

// scroll keeps the cursor's row (and its detail line) on screen, and the
// screen full when the rows below the first shown fit.
func (m *Model) scroll() {
	n := m.listLines()
	m.offset = max(0, min(m.offset, m.cursor))
	for m.offset < m.cursor && m.rowLines(m.offset, m.cursor) > n {
		m.offset++
	}
	for m.offset > 0 && m.rowLines(m.offset-1, len(m.shown)-1) <= n {
		m.offset--
	}
}

// rowLines is how many screen lines the shown rows from..to take.
func (m *Model) rowLines(from, to int) int {
	n := 0
	for i := from; i <= to && i < len(m.shown); i++ {
		n++
		if m.shown[i].Detail != "" {
			n++
		}
	}
	return n
}

// setStatus shows an action's result or error, and starts the clock that
// clears it.
func (m *Model) setStatus(text string, err error) tea.Cmd {
	m.showStatus(text, err)
	seq := m.statusSeq
	return m.after(statusTTL, func(time.Time) tea.Msg { return statusExpiredMsg{seq: seq} })
}

// showStatus shows a message until the next one (an action under way
// stays until its result replaces it).
func (m *Model) showStatus(text string, err error) {
	m.statusSeq++
	m.status, m.statusErr = text, err != nil
	if err != nil {
		m.status = "error: " + err.Error()
	}
}

// current is the worker keys act on: the detail view's, else the
// selected row's.
func (m *Model) current() string {
	if m.view != viewList {
		return m.target
	}
	return m.selected
}

// act runs a pause, resume or kill off the UI goroutine.
func (m *Model) act(verb, name string, f func(string) (string, error)) tea.Cmd {
	m.showStatus(fmt.Sprintf("%s %s...", verb, name), nil)
	m.actions.Add(1)
	return func() tea.Msg {
		defer m.actions.Done()
		text, err := f(name)
		return actionMsg{text: text, err: err}
	}
}

// Wait blocks until the actions started from the board have finished.
func (m *Model) Wait() { m.actions.Wait() }

// attach suspends the board for swarm attach NAME and resumes it after
// the detach; what the command said on stderr becomes the status.
func (m *Model) attach(name string) tea.Cmd {
	cmd := m.opts.Source.AttachCommand(name)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if m.opts.Terminal != nil {
		cmd.Stdout = m.opts.Terminal
	}
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return attachDone(name, errb.String(), err) })
}

// attachDone is the status after swarm attach: the detach, or the error
// it printed (the status line has room for the error, not its hint).
func attachDone(name, stderr string, err error) tea.Msg {
	if err == nil {
		return actionMsg{text: "detached from " + name}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if first != "" {
		err = errors.New(strings.TrimPrefix(first, "swarm: error: "))
	}
	return actionMsg{err: err}
}
