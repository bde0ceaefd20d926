package proc

// tree is what TerminateTargets knows to be the target's: processes by pid
// with their start ticks. A process is the tree's if its pid and start
// ticks match, or if its parent chain reaches such a process.
type tree struct {
	known map[int]int64
	self  int // our own process group, never signalled
}

// newTree takes the snapshot: for each root that still exists with its
// start time, the members of its own group, of the groups of the session
// it leads, and of its descendants' groups.
// self is our own process group.
func newTree(all []stat, roots []Target, self int) *tree {
	tr := &tree{known: map[int]int64{}, self: self}
	byPid := index(all)
	children := map[int][]int{}
	for _, st := range all {
		children[st.ppid] = append(children[st.ppid], st.pid)
	}
	groups := map[int]bool{}
	for _, r := range roots {
		st, ok := byPid[r.PID]
		if !ok || !r.matches(st) {
			continue
		}
		groups[st.pgrp] = true
		walkDescendants(r.PID, children, byPid, groups)
		for _, m := range all {
			if m.session == r.PID {
				groups[m.pgrp] = true
			}
		}
		tr.known[r.PID] = r.Ticks
	}
	// Our own group is never the target's: a root that shares it (a child
	// we did not put in a group of its own) is signalled through its other
	// groups only, and our parallel work is not taken for its tree.
	delete(groups, tr.self)
	for _, st := range all {
		if groups[st.pgrp] && st.pgrp > 1 && st.start != 0 {
			tr.known[st.pid] = st.start
		}
	}
	return tr
}

// walkDescendants adds the groups of pid's descendants to groups. The
// visited set guards against a parent chain that looks circular because
// /proc was read while processes came and went.
func walkDescendants(pid int, children map[int][]int, byPid map[int]stat, groups map[int]bool) {
	visited := map[int]bool{pid: true}
	stack := []int{pid}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			if visited[c] {
				continue
			}
			visited[c] = true
			groups[byPid[c].pgrp] = true
			stack = append(stack, c)
		}
	}
}

func index(all []stat) map[int]stat {
	byPid := make(map[int]stat, len(all))
	for _, st := range all {
		byPid[st.pid] = st
	}
	return byPid
}

// groups returns the process groups in all that hold a process of the
// tree, and whether any process in them runs (zombies do not). The members
// of those groups join the tree. Groups 0 and 1 and our own are never
// returned: signalling them would hit the kernel, init or swarm itself.
func (tr *tree) groups(all []stat) (groups []int, live bool) {
	byPid := index(all)
	ours := map[int]bool{}
	found := map[int]bool{}
	for _, st := range all {
		if tr.owns(st, byPid, ours) && st.pgrp > 1 && st.pgrp != tr.self && !found[st.pgrp] {
			found[st.pgrp] = true
			groups = append(groups, st.pgrp)
		}
	}
	for _, st := range all {
		if !found[st.pgrp] {
			continue
		}
		if st.start != 0 {
			tr.known[st.pid] = st.start
		}
		live = live || !st.dead()
	}
	return groups, live
}

// owns reports whether st is a process of the tree: known by pid and
// start ticks, or a descendant of one. ours memoizes the answer per pid.
func (tr *tree) owns(st stat, byPid map[int]stat, ours map[int]bool) bool {
	var chain []int
	verdict := false
	for cur, ok := st, true; ok; cur, ok = byPid[cur.ppid] {
		if v, seen := ours[cur.pid]; seen {
			verdict = v
			break
		}
		if ticks, known := tr.known[cur.pid]; known && ticks == cur.start {
			verdict = true
			chain = append(chain, cur.pid)
			break
		}
		chain = append(chain, cur.pid)
		if cur.ppid <= 1 || len(chain) > len(byPid) {
			break
		}
	}
	for _, p := range chain {
		ours[p] = verdict
	}
	return verdict
}
