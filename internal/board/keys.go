package board

import (
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// keyMap holds the board's keys: one binding each dispatches the key and
// says what it does in the help (? shows them all). Selection is by the
// arrow keys only: k is kill, so vi's j/k would put a kill one key away
// from moving the selection.
type keyMap struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding
	// Open shows the selected worker's screen, or an ended loop's last
	// output; Back leaves that view (enter works too).
	// Diff shows a worktree worker's changes against its base (in the
	// full help only: the short line is full).
	Open, Back, Events, Diff       key.Binding
	Attach, Pause, Resume, Kill    key.Binding
	Filter, ClearFilter, Help      key.Binding
	Quit, ForceQuit, Yes           key.Binding
	KeepFilter, DropFilter, Select key.Binding
}

func newKeyMap() keyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Up:          b("↑", "up", "up"),
		Down:        b("↓", "down", "down"),
		PageUp:      b("pgup", "page up", "pgup"),
		PageDown:    b("pgdown", "page down", "pgdown"),
		Home:        b("home", "first", "home"),
		End:         b("end", "last", "end"),
		Open:        b("enter", "screen", "enter"),
		Back:        b("esc", "back", "esc", "enter"),
		Events:      b("l", "events", "l"),
		Diff:        b("d", "diff", "d"),
		Attach:      b("a", "attach", "a"),
		Pause:       b("p", "pause", "p"),
		Resume:      b("r", "resume", "r"),
		Kill:        b("k", "kill", "k"),
		Filter:      b("/", "filter", "/"),
		ClearFilter: b("esc", "clear filter", "esc"),
		Help:        b("?", "more keys", "?"),
		Quit:        b("q", "quit", "q"),
		ForceQuit:   b("ctrl+c", "quit", "ctrl+c"),
		Yes:         b("y", "yes", "y"),
		KeepFilter:  b("enter", "keep", "enter"),
		DropFilter:  b("esc", "clear", "esc"),
		// Select is Up and Down as one entry of the short help.
		Select: b("↑/↓", "select", "up", "down"),
	}
}

// Help for each thing the board does: the short line, and the columns ?
// shows.
type (
	listHelp   struct{ k keyMap }
	detailHelp struct{ k keyMap }
	filterHelp struct{ k keyMap }
)

func (h listHelp) ShortHelp() []key.Binding {
	k := h.k
	return []key.Binding{k.Select, k.Open, k.Events, k.Attach, k.Pause, k.Resume, k.Kill, k.Filter, k.Help, k.Quit}
}

func (h listHelp) FullHelp() [][]key.Binding {
	k := h.k
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End},
		{k.Open, k.Events, k.Diff, k.Attach},
		{k.Pause, k.Resume, k.Kill},
		{k.Filter, k.ClearFilter, k.Help, k.Quit},
	}
}

func (h detailHelp) ShortHelp() []key.Binding {
	k := h.k
	return []key.Binding{k.Back, k.Events, k.Attach, k.Pause, k.Resume, k.Kill, k.Help, k.Quit}
}

func (h detailHelp) FullHelp() [][]key.Binding {
	k := h.k
	return [][]key.Binding{{k.Back, k.Events, k.Diff, k.Attach}, {k.Pause, k.Resume, k.Kill}, {k.Help, k.Quit}}
}

func (h filterHelp) ShortHelp() []key.Binding {
	return []key.Binding{h.k.KeepFilter, h.k.DropFilter}
}

func (h filterHelp) FullHelp() [][]key.Binding { return [][]key.Binding{h.ShortHelp()} }

// helpKeys is the help of what the board does now.
func (m *Model) helpKeys() help.KeyMap {
	switch {
	case m.editing:
		return filterHelp{m.keys}
	case m.view != viewList:
		return detailHelp{m.keys}
	}
	k := m.keys
	if r, ok := m.selectedRow(); ok && r.Ended {
		k.Open.SetHelp("enter", "last output")
	}
	return listHelp{k}
}

// onKey dispatches a key press by what the board is doing. A press that
// brings several characters ("/team") is a key each, so "/" starts the
// filter and the rest are typed into it.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	if utf8.RuneCountInString(k.Text) > 1 {
		var cmds []tea.Cmd
		for _, r := range k.Text {
			cmds = append(cmds, m.onKey(tea.KeyPressMsg{Code: r, Text: string(r), Mod: k.Mod}))
		}
		return tea.Batch(cmds...)
	}
	return m.onOneKey(k)
}

// onPaste: pasted text is typed into the filter being edited; elsewhere
// it is no key, and a kill waiting for its y is not confirmed by it.
func (m *Model) onPaste(text string) tea.Cmd {
	switch {
	case m.confirm != "":
		return m.onConfirm(false)
	case m.editing:
		m.filter += text
		m.applyFilter()
	}
	return nil
}

func (m *Model) onOneKey(k tea.KeyPressMsg) tea.Cmd {
	if key.Matches(k, m.keys.ForceQuit) {
		return tea.Quit
	}
	switch {
	case m.confirm != "":
		return m.onConfirm(key.Matches(k, m.keys.Yes))
	case m.editing:
		m.onFilterKey(k)
		return nil
	case key.Matches(k, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
		m.scroll()
		return nil
	}
	if cmd, ok := m.onActionKey(k); ok {
		return cmd
	}
	if m.view != viewList {
		return m.onDetailKey(k)
	}
	return m.onListKey(k)
}

// onConfirm answers "kill NAME? (y/n)": y kills, any other key does not.
func (m *Model) onConfirm(yes bool) tea.Cmd {
	name := m.confirm
	m.confirm = ""
	if !yes {
		return m.setStatus("not killed: "+name, nil)
	}
	return m.act("killing", name, m.opts.Source.Kill)
}

// onFilterKey edits the filter; it applies as it is typed.
func (m *Model) onFilterKey(k tea.KeyPressMsg) {
	switch {
	case k.Code == tea.KeyEnter:
		m.editing = false
	case k.Code == tea.KeyEscape:
		m.editing, m.filter = false, ""
	case k.Code == tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case k.Text != "": // a printable character, space included
		m.filter += k.Text
	default:
		return
	}
	m.applyFilter()
}

// onActionKey handles the keys that act on the current worker in every
// view; ok is false for other keys.
func (m *Model) onActionKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if key.Matches(k, m.keys.Quit) {
		return tea.Quit, true
	}
	if !key.Matches(k, m.keys.Attach, m.keys.Pause, m.keys.Resume, m.keys.Kill) {
		return nil, false
	}
	name := m.current()
	if name == "" {
		return nil, true
	}
	switch {
	case key.Matches(k, m.keys.Attach):
		return m.attach(name), true
	case key.Matches(k, m.keys.Pause):
		return m.act("pausing", name, m.opts.Source.Pause), true
	case key.Matches(k, m.keys.Resume):
		return m.act("resuming", name, m.opts.Source.Resume), true
	}
	m.confirm = name
	return nil, true
}

// onDetailKey: esc or enter goes back to the list; l switches to the
// loop's events, d to the worker's diff.
func (m *Model) onDetailKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, m.keys.Back):
		m.view, m.target, m.detail, m.detTitle, m.detErr = viewList, "", "", "", nil
	case key.Matches(k, m.keys.Events):
		return m.open(viewLog, m.target)
	case key.Matches(k, m.keys.Diff):
		return m.open(viewDiff, m.target)
	}
	return nil
}

// onListKey moves the selection and opens views.
func (m *Model) onListKey(k tea.KeyPressMsg) tea.Cmd {
	page := max(1, m.listLines()-1)
	switch {
	case key.Matches(k, m.keys.Up):
		m.move(-1)
	case key.Matches(k, m.keys.Down):
		m.move(1)
	case key.Matches(k, m.keys.PageUp):
		m.move(-page)
	case key.Matches(k, m.keys.PageDown):
		m.move(page)
	case key.Matches(k, m.keys.Home):
		m.move(-len(m.shown))
	case key.Matches(k, m.keys.End):
		m.move(len(m.shown))
	case key.Matches(k, m.keys.Open):
		if r, ok := m.selectedRow(); ok && r.Ended {
			return m.open(viewOutput, r.Key())
		}
		return m.open(viewPeek, m.selected)
	case key.Matches(k, m.keys.Events):
		return m.open(viewLog, m.selected)
	case key.Matches(k, m.keys.Diff):
		return m.open(viewDiff, m.selected)
	case key.Matches(k, m.keys.Filter):
		m.editing = true
		m.scroll()
	case key.Matches(k, m.keys.ClearFilter):
		m.filter = ""
		m.applyFilter()
	}
	return nil
}

// selectedRow is the row under the cursor.
func (m *Model) selectedRow() (Row, bool) {
	if m.cursor < len(m.shown) {
		return m.shown[m.cursor], true
	}
	return Row{}, false
}

func (m *Model) move(by int) {
	if len(m.shown) == 0 {
		return
	}
	m.cursor = max(0, min(len(m.shown)-1, m.cursor+by))
	m.chosen = true
	m.syncSelection()
}

// open shows a worker's screen, a loop's events, an ended loop's last
// output or a worker's diff, read at once and then at every tick.
func (m *Model) open(v view, name string) tea.Cmd {
	if name == "" {
		return nil
	}
	m.view, m.target, m.detail, m.detTitle, m.detErr = v, name, "", "", nil
	return m.fetchDetail()
}
