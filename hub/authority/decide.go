package authority

import "fmt"

// Observed is what the hub sees of its store at start.
type Observed struct {
	// Epoch is the store's epoch; Created is true when the store had
	// none and got it now.
	Epoch   string
	Created bool
	// Revision is the store's current revision.
	Revision int64
	// Checkpoint is this replica's counter in the store; 0 when absent.
	Checkpoint int64
}

// Decide returns "" when a store observed as obs may be trusted by a hub
// whose record is rec (nil: none, the first start of this data
// directory), or why not.
func Decide(rec *Record, obs Observed) string {
	switch {
	case rec == nil:
		return ""
	case rec.NotAuthoritative != "":
		return rec.NotAuthoritative + " (recorded " + rec.Updated.UTC().Format("2006-01-02T15:04:05Z") + ")"
	case obs.Created:
		return fmt.Sprintf("the store has no epoch but this hub recorded epoch %s: the store was wiped or replaced", rec.Epoch)
	case obs.Epoch != rec.Epoch:
		return fmt.Sprintf("the store's epoch %s is not the epoch %s this hub recorded: the store was replaced", obs.Epoch, rec.Epoch)
	case obs.Revision < rec.Revision:
		return fmt.Sprintf("the store's revision %d is lower than revision %d this hub saw: the store was restored from an older snapshot", obs.Revision, rec.Revision)
	case obs.Checkpoint < rec.Checkpoint:
		return fmt.Sprintf("the store's checkpoint %d is lower than checkpoint %d this hub wrote: the store was restored from an older snapshot", obs.Checkpoint, rec.Checkpoint)
	}
	return ""
}
