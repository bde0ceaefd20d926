package board

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/swarmtools/swarm/internal/duration"
)

// Columns are the board's column headers, in order.
var Columns = []string{"NAME", "KIND", "STATUS", "ITER", "ELAPSED", "ETA", "QUIET", "MONITOR", "FAILS", "REASON", "TAG"}

// columnGap separates columns, as ls and ralph ls do.
const columnGap = 2

// none fills a cell without a value.
const none = "-"

// Cells returns the row's column texts, in the order of Columns.
func (r Row) Cells() []string {
	iter, fails := none, none
	if r.IsLoop() {
		iter = fmt.Sprintf("%d/%d", r.Iteration, r.MaxIterations)
		fails = fmt.Sprintf("%d/%d", r.Failures, r.TotalFailures)
	}
	tags := none
	if len(r.Tags) > 0 {
		tags = strings.Join(r.Tags, ",")
	}
	return []string{r.Name, r.Kind, orNone(r.Status), iter,
		dur(r.Elapsed, r.HasElapsed), dur(r.ETA, r.HasETA), dur(r.Quiet, r.HasQuiet),
		orNone(r.Monitor), fails, orNone(r.Reason), tags}
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

// table lays out the header and rows as padded lines; a cell's width is
// its display width, so wide characters in names or tags keep columns
// aligned. The last column is not padded (no trailing spaces).
func table(rows []Row) []string {
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, Columns)
	for _, r := range rows {
		cells = append(cells, r.Cells())
	}
	widths := make([]int, len(Columns))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	out := make([]string, len(cells))
	var b strings.Builder
	for n, line := range cells {
		b.Reset()
		for i, c := range line {
			b.WriteString(c)
			if i < len(line)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+columnGap))
			}
		}
		out[n] = b.String()
	}
	return out
}

// Prepare builds and sorts the rows of a snapshot: what the board shows
// (before its filter) and swarm top --once prints.
func Prepare(s Snapshot) []Row {
	rows := Build(s.Live, s.Loops, s.At)
	Sort(rows)
	return rows
}

// WritePlain writes the board as plain text: the header line, then one
// line per row. No escape sequences, so scripts and tests can read it.
func WritePlain(w io.Writer, rows []Row) error {
	for _, line := range table(rows) {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
