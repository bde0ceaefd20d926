package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Host is one entry of hosts.json: a machine swarm reaches with ssh
// (swarm hosts add). The remote package checks the fields before use.
type Host struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	// Swarm is the swarm binary on the host ("": swarm on its PATH).
	Swarm string `json:"swarm,omitempty"`
	// StateRoot and TmuxSocket are the remote swarm's SWARM_HOME and
	// SWARM_TMUX_SOCKET ("": its own defaults).
	StateRoot  string `json:"state_root,omitempty"`
	TmuxSocket string `json:"tmux_socket,omitempty"`
	// Env is more KEY=VALUE for the remote swarm's environment.
	Env []string `json:"env,omitempty"`
	// SSHOptions are ssh -o options (KEY=VALUE) for this host.
	SSHOptions []string `json:"ssh_options,omitempty"`
}

// hostsFile is hosts.json.
type hostsFile struct {
	Hosts []Host `json:"hosts"`
}

// ErrNoHost is returned for a host name hosts.json does not have.
var ErrNoHost = errors.New("no such host")

// HostsPath is where the hosts live.
func (s *Store) HostsPath() string { return filepath.Join(s.Root, "hosts.json") }

func (s *Store) hostsLockPath() string { return filepath.Join(s.Root, "hosts.lock") }

// Hosts reads hosts.json; a missing file is no hosts. The file names ssh
// options and a command swarm runs (ssh's ProxyCommand runs here), so,
// like config.json, it is read only when the user owns it and nobody
// else can write it, even in a shared root the user trusts; and it is
// read strictly: a broken file is an error, never read as no hosts.
func (s *Store) Hosts() ([]Host, error) {
	if err := CheckRoot(s.Root); err != nil {
		return nil, err
	}
	data, err := s.readHosts()
	if err != nil {
		return nil, err
	}
	return decodeHosts(s.HostsPath(), data)
}

// readHosts reads hosts.json's bytes (nil when there is none).
func (s *Store) readHosts() ([]byte, error) {
	f, err := openChecked("hosts file", s.HostsPath(), os.O_RDONLY, 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	return readBounded("state file", f, MaxFileSize)
}

// Host returns the named host.
func (s *Store) Host(name string) (Host, error) {
	hosts, err := s.Hosts()
	if err != nil {
		return Host{}, err
	}
	for _, h := range hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("%w: '%s'", ErrNoHost, name)
}

// UpdateHosts runs fn on the hosts under hosts.lock and writes them back
// atomically when fn returns nil. A broken hosts.json fails the update
// and is left as it is, for the user to mend.
func (s *Store) UpdateHosts(fn func(*[]Host) error) error {
	if err := MakeDir(s.Root, s.Root); err != nil {
		return err
	}
	return withLock(s.hostsLockPath(), func() error {
		data, err := s.readHosts()
		if err != nil {
			return err
		}
		hosts, err := decodeHosts(s.HostsPath(), data)
		if err != nil {
			return err
		}
		if err := fn(&hosts); err != nil {
			return err
		}
		if hosts == nil {
			hosts = []Host{}
		}
		out, err := json.MarshalIndent(hostsFile{Hosts: hosts}, "", "  ")
		if err != nil {
			return err
		}
		if err := WriteFileAtomic(s.HostsPath(), append(out, '\n')); err != nil {
			return err
		}
		sweepStaleTemps(s.HostsPath())
		return nil
	})
}

// decodeHosts decodes hosts.json strictly: unknown keys, wrong types,
// anything after the object and two hosts of one name are errors.
func decodeHosts(path string, data []byte) ([]Host, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var f hostsFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&f)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("invalid hosts file %s: %w", path, err)
	}
	seen := map[string]bool{}
	for _, h := range f.Hosts {
		if seen[h.Name] {
			return nil, fmt.Errorf("invalid hosts file %s: host '%s' is there twice", path, h.Name)
		}
		seen[h.Name] = true
	}
	return f.Hosts, nil
}
