package board

import (
	tea "github.com/charmbracelet/bubbletea"
)

// Keys. Selection is by the arrow keys only: k is kill, so vi's j/k would
// put a kill one key away from moving the selection.
const (
	keyQuit    = "q"
	keyCtrlC   = "ctrl+c"
	keyUp      = "up"
	keyDown    = "down"
	keyPgUp    = "pgup"
	keyPgDown  = "pgdown"
	keyHome    = "home"
	keyEnd     = "end"
	keyEnter   = "enter"
	keyEsc     = "esc"
	keyAttach  = "a"
	keyPause   = "p"
	keyResume  = "r"
	keyKill    = "k"
	keyYes     = "y"
	keyLog     = "l"
	keyFilter  = "/"
	keyBackspc = "backspace"
)

// onKey dispatches a key press by what the board is doing. Keys typed
// faster than the board reads them arrive as one message of several
// runes ("/team"); each is a key of its own, so "/" starts the filter
// and the rest are typed into it.
func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		var cmds []tea.Cmd
		for _, r := range k.Runes {
			cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
		}
		return tea.Batch(cmds...)
	}
	return m.onOneKey(k)
}

func (m *Model) onOneKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == keyCtrlC {
		return tea.Quit
	}
	switch {
	case m.confirm != "":
		return m.onConfirmKey(k)
	case m.editing:
		m.onFilterKey(k)
		return nil
	}
	if cmd, ok := m.onActionKey(k.String()); ok {
		return cmd
	}
	if m.view != viewList {
		return m.onDetailKey(k.String())
	}
	return m.onListKey(k.String())
}

// onConfirmKey answers "kill NAME? (y/n)": y kills, any other key does not.
func (m *Model) onConfirmKey(k tea.KeyMsg) tea.Cmd {
	name := m.confirm
	m.confirm = ""
	if k.String() != keyYes {
		m.setStatus("not killed: "+name, nil)
		return nil
	}
	return m.act("killing", name, m.opts.Source.Kill)
}

// onFilterKey edits the filter; it applies as it is typed.
func (m *Model) onFilterKey(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyEnter:
		m.editing = false
	case tea.KeyEsc:
		m.editing, m.filter = false, ""
	case tea.KeyBackspace:
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	case tea.KeyRunes, tea.KeySpace:
		m.filter += string(k.Runes)
	default:
		return
	}
	m.applyFilter()
}

// onActionKey handles the keys that act on the current worker in every
// view; ok is false for other keys.
func (m *Model) onActionKey(key string) (tea.Cmd, bool) {
	switch key {
	case keyQuit:
		return tea.Quit, true
	case keyAttach, keyPause, keyResume, keyKill:
	default:
		return nil, false
	}
	name := m.current()
	if name == "" {
		return nil, true
	}
	switch key {
	case keyAttach:
		return m.attach(name), true
	case keyPause:
		return m.act("pausing", name, m.opts.Source.Pause), true
	case keyResume:
		return m.act("resuming", name, m.opts.Source.Resume), true
	}
	m.confirm = name
	return nil, true
}

// onDetailKey: esc or enter goes back to the list; l switches to the log.
func (m *Model) onDetailKey(key string) tea.Cmd {
	switch key {
	case keyEsc, keyEnter:
		m.view, m.target, m.detail, m.detErr = viewList, "", "", nil
	case keyLog:
		return m.open(viewLog, m.target)
	}
	return nil
}

// onListKey moves the selection and opens views.
func (m *Model) onListKey(key string) tea.Cmd {
	page := max(1, m.listLines()-1)
	switch key {
	case keyUp:
		m.move(-1)
	case keyDown:
		m.move(1)
	case keyPgUp:
		m.move(-page)
	case keyPgDown:
		m.move(page)
	case keyHome:
		m.move(-len(m.shown))
	case keyEnd:
		m.move(len(m.shown))
	case keyEnter:
		return m.open(viewPeek, m.selected)
	case keyLog:
		return m.open(viewLog, m.selected)
	case keyFilter:
		m.editing = true
	case keyEsc:
		m.filter = ""
		m.applyFilter()
	}
	return nil
}

func (m *Model) move(by int) {
	if len(m.shown) == 0 {
		return
	}
	m.cursor = max(0, min(len(m.shown)-1, m.cursor+by))
	m.chosen = true
	m.syncSelection()
}

// open shows a worker's screen or a loop's events, read at once and then
// at every tick.
func (m *Model) open(v view, name string) tea.Cmd {
	if name == "" {
		return nil
	}
	m.view, m.target, m.detail, m.detErr = v, name, "", nil
	return m.fetchDetail()
}
