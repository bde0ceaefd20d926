package board

import (
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/ralph"
	"github.com/swarmtools/swarm/internal/termtext"
)

// Columns are the board's column headers, in order; with hosts, HOST
// comes first (HostColumn).
var Columns = []string{"NAME", "KIND", "STATUS", "ITER", "ELAPSED", "ETA", "QUIET", "MONITOR", "FAILS", "COST", "REASON", "TAG"}

// HostColumn is the header of the host column.
const HostColumn = "HOST"

// columnGap separates columns, as ls and ralph ls do.
const columnGap = 2

// none fills a cell without a value.
const none = "-"

// Cells returns the row's column texts, in the order of Columns. Tags
// are the user's and reasons and statuses come from state files, so every
// cell is made one line of printable text (termtext.Line): an escape
// sequence in one must not clear or redraw the board, nor a newline forge
// a row.
func (r Row) Cells() []string {
	iter, fails, cost := none, none, none
	if r.IsLoop() {
		iter = fmt.Sprintf("%d/%d", r.Iteration, r.MaxIterations)
		fails = fmt.Sprintf("%d/%d", r.Failures, r.TotalFailures)
	}
	if r.Cost != nil {
		cost = ralph.FormatCost(*r.Cost)
	}
	tags := none
	if len(r.Tags) > 0 {
		tags = strings.Join(r.Tags, ",")
	}
	if r.Kind == KindHost {
		iter, fails = none, none
	}
	cells := []string{r.Name, r.Kind, orNone(r.Status), iter,
		dur(r.Elapsed, r.HasElapsed), dur(r.ETA, r.HasETA), dur(r.Quiet, r.HasQuiet),
		orNone(r.Monitor), fails, cost, orNone(r.Reason), tags}
	if r.Host != "" {
		host := r.Host
		if r.Stale {
			host += " (stale)"
		}
		cells = append([]string{host}, cells...)
	}
	for i, c := range cells {
		cells[i] = termtext.Line(c)
	}
	return cells
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// dur renders a duration as ralph ls and ralph status do ("5m 42s").
func dur(d time.Duration, ok bool) string {
	if !ok {
		return none
	}
	return duration.Format(d)
}

// Columns that give up width when the table is wider than the screen,
// down to their minimum, widest first: the ones whose values are long
// (names, tags, a waiting loop's "waiting until Mar 5 09:00", reasons).
// The others are short figures, which are never cut.
var shrinkable = map[int]int{colName: 8, colStatus: 7, colReason: 6, colTag: 3}

// Column indexes in Columns.
const (
	colName   = 0
	colStatus = 2
	colReason = 10
	colTag    = 11
)

// table lays out the header and rows as padded lines; a cell's width is
// its display width, so wide characters in names or tags keep columns
// aligned. The last column is not padded (no trailing spaces). With width
// > 0 (the live board) a table wider than that cuts the long columns'
// cells, ending them with an ellipsis; with 0 (--once, for scripts)
// nothing is cut.
func table(rows []Row, width int) []string {
	header, shift := Columns, 0
	if len(rows) > 0 && rows[0].Host != "" {
		header, shift = append([]string{HostColumn}, Columns...), 1
	}
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, header)
	for _, r := range rows {
		cells = append(cells, r.Cells())
	}
	widths := make([]int, len(header))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	if width > 0 {
		fit(widths, width, shift)
	}
	out := make([]string, len(cells))
	var b strings.Builder
	for n, line := range cells {
		b.Reset()
		for i, c := range line {
			c = ansi.Truncate(c, widths[i], ellipsis)
			b.WriteString(c)
			if i < len(line)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+columnGap))
			}
		}
		out[n] = b.String()
	}
	return out
}

// fit narrows the shrinkable columns, the widest first, until the table
// fits in width or they are at their minimum; shift is the number of
// columns before Columns' first (the host column).
func fit(widths []int, width, shift int) {
	total := columnGap * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for total > width {
		widest := -1
		for c, least := range shrinkable {
			i := c + shift
			if widths[i] > least && (widest < 0 || widths[i] > widths[widest] || widths[i] == widths[widest] && i < widest) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		widths[widest]--
		total--
	}
}

// Prepare builds and sorts the rows of a snapshot: what the board shows
// (before its filter) and swarm top --once prints. With hosts, every row
// has its host, this machine's Local (when it was read: a snapshot of
// hosts only has no local rows), and a host that could not be asked has
// a row of its own saying why, above its last known rows, marked stale.
func Prepare(s Snapshot) []Row {
	rows := Build(s.Live, s.Loops, s.At)
	if len(s.Hosts) > 0 {
		for i := range rows {
			rows[i].Host = Local
		}
	}
	for _, h := range s.Hosts {
		for _, r := range h.Rows {
			r = r.Sanitized()
			r.Host, r.Stale = h.Host, h.Err != ""
			rows = append(rows, r)
		}
		if h.Err != "" {
			rows = append(rows, Row{Host: h.Host, Name: none, Kind: KindHost, Status: "unreachable",
				Monitor: none, Reason: termtext.Line(h.Err), Group: GroupUnreachable})
		}
	}
	Sort(rows)
	return rows
}

// WritePlain writes the board as plain text: the header line, then one
// line per row. No escape sequences, so scripts and tests can read it.
func WritePlain(w io.Writer, rows []Row) error {
	for _, line := range table(rows, 0) {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
