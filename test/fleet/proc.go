package fleet

import (
	"fmt"
	"time"

	"github.com/tetherproj/tether/test/proc"
)

// stopGrace is how long the hub or an agent may take to exit after SIGTERM
// before its process group gets SIGKILL. The hub lets calls finish for up to
// 10 s on a graceful stop; with the agents gone first it has none left, so
// it exits in well under a second. The margin is for a loaded machine.
const stopGrace = 15 * time.Second

// process is one hub or agent process, with its command line so that
// Restart can start it again.
type process struct {
	*proc.Process
	role, name string
	bin        string
	args       []string
	logPath    string
}

// startProcess starts bin with args, its output appended to logPath.
func startProcess(sp *proc.Spawner, role, name, bin string, args []string, logPath string) (*process, error) {
	p, err := proc.Start(sp, proc.Config{Name: role + " " + name, Bin: bin, Args: args, LogPath: logPath})
	if err != nil {
		return nil, fmt.Errorf("start %s %s: %w", role, name, err)
	}
	return &process{Process: p, role: role, name: name, bin: bin, args: args, logPath: logPath}, nil
}

// LogTail returns the last n lines of a log file, or why it could not be
// read.
func LogTail(path string, n int) string { return proc.FileTail(path, n) }
