package restore

import (
	"strings"
	"testing"
)

// TestUnitQuoting: what systemd or cron would expand in a path (%, $, a
// quote, a space) reaches them escaped.
func TestUnitQuoting(t *testing.T) {
	t.Parallel()
	o := UnitOptions{Root: `/h/a b%c"d`, Self: `/opt/$x/swarm`, Path: "/bin:/u%s"}
	text := unitText(o)
	for _, want := range []string{
		`Environment="SWARM_HOME=/h/a b%%c\"d"` + "\n",
		`Environment="PATH=/bin:/u%%s"` + "\n",
		`ExecStart="/opt/$$x/swarm" restore --all` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("unit lacks %q:\n%s", want, text)
		}
	}
	line := cronLine(o)
	if want := `@reboot SWARM_HOME='/h/a b\%c"d' PATH='/bin:/u\%s' '/opt/$x/swarm' restore --all >> '/h/a b\%c"d/restore.log' 2>&1`; line != want {
		t.Errorf("cron line\n got %s\nwant %s", line, want)
	}
}
