package board

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/swarmtools/swarm/internal/duration"
	"github.com/swarmtools/swarm/internal/hint"
	"github.com/swarmtools/swarm/internal/termtext"
)

// Screen lines around the rows: the title and the column header above,
// the status line below, and below it the key help (one line, or the
// columns ? shows).
const (
	linesAbove = 2
	linesBelow = 1
	// detailChrome: the title and status of the peek, log and output
	// views.
	detailChrome = 2
	// fallbackWidth is assumed until the terminal reports its size.
	fallbackWidth = 120
	// ellipsis ends a cut cell or line.
	ellipsis = "…"
	// detailIndent starts a row's detail line, under its name.
	detailIndent = "  "
)

// Terminal colours by number (the 16 ANSI colours follow the user's theme).
const (
	colourRed     = "1"
	colourYellow  = "3"
	colourMagenta = "5"
	colourCyan    = "6"
)

type styles struct {
	title, header, help, errText lipgloss.Style
	byGroup                      map[Group]lipgloss.Style
	selected                     lipgloss.Style
}

// newStyles builds the board's styles when a board is made, not at
// start-up: most commands never draw one. Bubble Tea's renderer fits the
// colours to the terminal it draws on.
func newStyles() styles {
	red := lipgloss.NewStyle().Foreground(lipgloss.Color(colourRed))
	yellow := lipgloss.NewStyle().Foreground(lipgloss.Color(colourYellow))
	return styles{
		title:   lipgloss.NewStyle().Bold(true),
		header:  lipgloss.NewStyle().Bold(true),
		help:    lipgloss.NewStyle().Faint(true),
		errText: red,
		byGroup: map[Group]lipgloss.Style{
			GroupUnreachable: red.Bold(true),
			GroupFailed:      red.Bold(true),
			GroupAsks:        lipgloss.NewStyle().Foreground(lipgloss.Color(colourMagenta)).Bold(true),
			GroupDeadMonitor: red,
			GroupQuiet:       yellow,
			GroupWaiting:     yellow,
			GroupPaused:      lipgloss.NewStyle().Foreground(lipgloss.Color(colourCyan)),
			GroupRunning:     lipgloss.NewStyle(),
			GroupRest:        lipgloss.NewStyle().Faint(true),
		},
		selected: lipgloss.NewStyle().Reverse(true),
	}
}

// newHelp is the key help (bubbles' help), in the board's help style.
func newHelp(s styles) help.Model {
	h := help.New()
	h.ShortSeparator = "  "
	st := s.help
	h.Styles = help.Styles{Ellipsis: st, ShortKey: st, ShortDesc: st, ShortSeparator: st,
		FullKey: st.Bold(true), FullDesc: st, FullSeparator: st}
	return h
}

// helpView is the key help as it shows under the status line. Its lines
// are cut to the screen too: help cuts the short help only where its
// ellipsis fits after the last whole entry.
func (m *Model) helpView() string {
	v := m.help.View(m.helpKeys())
	if m.editing {
		v = m.styles.help.Render("type to filter by name or tag  ") + v
	}
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		lines[i] = m.clip(l)
	}
	return strings.Join(lines, "\n")
}

// helpLines is how many lines the key help takes.
func (m *Model) helpLines() int { return lipgloss.Height(m.helpView()) }

// listLines is how many rows fit on the screen.
func (m *Model) listLines() int {
	if m.height == 0 {
		return max(1, len(m.shown))
	}
	n := m.height - linesAbove - linesBelow - m.helpLines()
	if m.editing || m.filter != "" {
		n--
	}
	return max(1, n)
}

// detailLines is how many lines of a screen or log fit.
func (m *Model) detailLines() int {
	if m.height == 0 {
		return defaultDetailLines
	}
	return max(1, m.height-detailChrome-m.helpLines())
}

func (m *Model) lineWidth() int {
	if m.width == 0 {
		return fallbackWidth
	}
	return m.width
}

// clip cuts a line to the screen's width, marking the cut with an
// ellipsis (escape sequences are kept whole).
func (m *Model) clip(s string) string {
	return ansi.Truncate(s, m.lineWidth(), ellipsis)
}

// View draws the board, full screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame())
	v.AltScreen = true
	return v
}

// frame is the board's screen.
func (m *Model) frame() string {
	var lines []string
	if m.view == viewList {
		lines = m.listView()
	} else {
		lines = m.detailView()
	}
	lines = append(lines, m.statusLine(), m.helpView())
	return strings.Join(lines, "\n")
}

func (m *Model) listView() []string {
	lines := []string{m.titleLine(), m.styles.header.Render(m.clip(m.table[0]))}
	n := m.listLines()
	for i := m.offset; i < len(m.shown) && len(lines) < linesAbove+n; i++ {
		lines = append(lines, m.rowLine(i, m.table[i+1]))
		// Detail is made printable where it is built (detail).
		if d := m.shown[i].Detail; d != "" && len(lines) < linesAbove+n {
			lines = append(lines, m.styles.byGroup[m.shown[i].Group].Render(m.clip(detailIndent+d)))
		}
	}
	if len(m.shown) == 0 {
		lines = append(lines, m.emptyText())
	}
	// Keep the footer at the bottom of the screen.
	for len(lines) < linesAbove+n {
		lines = append(lines, "")
	}
	if m.editing || m.filter != "" {
		cursor := ""
		if m.editing {
			cursor = "_"
		}
		lines = append(lines, m.clip("/"+m.filter+cursor))
	}
	return lines
}

func (m *Model) rowLine(i int, text string) string {
	style := m.styles.byGroup[m.shown[i].Group]
	if i == m.cursor {
		// The whole width, so the selection reads as a bar.
		text = text + strings.Repeat(" ", max(0, m.lineWidth()-lipgloss.Width(text)))
		style = style.Inherit(m.styles.selected).Reverse(true)
	}
	return style.Render(m.clip(text))
}

func (m *Model) emptyText() string {
	if m.filter != "" {
		return fmt.Sprintf("no worker or loop matches %q (esc clears the filter)", m.filter)
	}
	return "no workers or loops (start one with swarm spawn or swarm ralph spawn)"
}

func (m *Model) titleLine() string {
	workers, loops, problems := 0, 0, 0
	for _, r := range m.rows {
		if r.HasWorker {
			workers++
		}
		if r.IsLoop() {
			loops++
		}
		if r.Group.Problem() {
			problems++
		}
	}
	left := fmt.Sprintf("swarm top  %s  %s  %s", count(workers, "worker"), count(loops, "loop"), count(problems, "problem"))
	right := "every " + interval(m.opts.Interval)
	if !m.at.IsZero() {
		right += "  " + m.at.Format("15:04:05")
	}
	gap := max(1, m.lineWidth()-lipgloss.Width(left)-lipgloss.Width(right))
	return m.styles.title.Render(m.clip(left + strings.Repeat(" ", gap) + right))
}

// count renders "1 loop", "2 loops".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// interval renders the refresh period: "2s", "500ms".
func interval(d time.Duration) string {
	if d < time.Second {
		return d.String()
	}
	return duration.Words(d)
}

func (m *Model) detailView() []string {
	title := fmt.Sprintf("screen of %s", m.target)
	switch {
	case m.detTitle != "":
		title = m.detTitle
	case m.view == viewLog:
		title = fmt.Sprintf("events of %s", m.target)
	case m.view == viewOutput:
		title = fmt.Sprintf("last output of %s", m.target)
	case m.view == viewDiff:
		title = fmt.Sprintf("diff of %s against its base (swarm diff %s for all of it)", m.target, m.target)
	}
	lines := []string{m.styles.title.Render(m.clip(title))}
	n := m.detailLines()
	var body []string
	switch {
	case m.detErr != nil:
		body = []string{m.styles.errText.Render(m.clip(termtext.Line("error: " + m.detErr.Error())))}
		if fix := hint.Of(m.detErr); fix != "" {
			// What to do about it, as the commands print it.
			body = append(body, m.clip(termtext.Line("hint: "+fix)))
		}
	case m.detail == "":
		body = []string{"(nothing yet)"}
	default:
		body = strings.Split(strings.TrimRight(m.detail, "\n"), "\n")
	}
	switch {
	case len(body) <= n:
	case m.view == viewDiff:
		// A diff reads from its top: the diffstat, then the patch.
		body = body[:n]
	default:
		body = body[len(body)-n:]
	}
	// A screen, a loop's events and its output quote the agent: each
	// line is made printable, as the table's cells are.
	for _, l := range body {
		lines = append(lines, m.clip(termtext.Line(l)))
	}
	for len(lines) < 1+n {
		lines = append(lines, "")
	}
	return lines
}

// statusLine is the kill question while one is asked, else a failed
// refresh (the board may be stale), else the last action's result.
func (m *Model) statusLine() string {
	switch {
	case m.confirm != "":
		return m.clip(fmt.Sprintf("kill %s? (y/n)", m.confirm))
	case m.err != nil:
		return m.styles.errText.Render(m.clip(termtext.Line("error: cannot refresh: " + m.err.Error())))
	case m.statusErr:
		return m.styles.errText.Render(m.clip(termtext.Line(m.status)))
	}
	return m.clip(termtext.Line(m.status))
}
