package hub

import (
	"net"
	"slices"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestLeaderOnlyTasks: exactly the controllers that write decisions run
// only while a replica leads (test/ha relies on it); every other task runs
// on every replica. Task names are unique (the logs and the controller
// error counts name them).
func TestLeaderOnlyTasks(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	p := &parts{base: &base{lis: &listeners{grpc: lis}}, hub: &Hub{logger: hclog.NewNullLogger()}, srv: &api{}}
	want := []string{"registration", "detector", "scheduler", "aggregate", "reports-prune", "rebalancer", "rollout"}
	var leaderOnlyNames, every []string
	seen := map[string]bool{}
	for _, task := range p.tasks() {
		if seen[task.name] {
			t.Errorf("task %s listed twice", task.name)
		}
		seen[task.name] = true
		if task.on == leaderOnly {
			leaderOnlyNames = append(leaderOnlyNames, task.name)
		} else {
			every = append(every, task.name)
		}
	}
	if !slices.Equal(leaderOnlyNames, want) {
		t.Errorf("leader-only tasks = %v; want %v", leaderOnlyNames, want)
	}
	if len(every) != 16 {
		t.Errorf("tasks on every replica = %v (%d); want 16 (17 with --metrics-listen)", every, len(every))
	}
}
