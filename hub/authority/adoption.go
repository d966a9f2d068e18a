package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tetherproj/tether/hub/store"
)

// Adoption is the operator's explicit decision that the store is the truth
// for the agents whose works came from Identities, though it is behind
// what they saw (a restore) or another store (a lost identity). Agents
// learn it in Welcome: an agent that holds the hub not authoritative for
// it trusts it again once, when the adoption names its works' hub
// identity and it has not seen the adoption before.
type Adoption struct {
	ID         string   `json:"id"`
	Identities []string `json:"identities"`
	// DeleteUnknown makes an adopted agent delete the works the hub does
	// not have; otherwise it keeps them, unmanaged and listed.
	DeleteUnknown bool `json:"deleteUnknown,omitempty"`
	// Revision is the store's revision when the adoption was recorded.
	Revision int64     `json:"revision"`
	At       time.Time `json:"at"`
}

// Adopt is what the operator asked at this start: accept the store as it
// is (--accept-store-reset) and adopt the agents of these identities
// (--adopt-identity; the hub's own identity always included).
type Adopt struct {
	Accept        bool
	Identities    []string
	DeleteUnknown bool
}

// wanted reports whether o records a new adoption.
func (o Adopt) wanted() bool { return o.Accept || len(o.Identities) > 0 }

// recordAdoption writes a new adoption of identities (own included) to the
// store and returns it.
func recordAdoption(ctx context.Context, st Store, own string, o Adopt, rev int64) (*Adoption, error) {
	ids := append([]string{own}, o.Identities...)
	slices.Sort(ids)
	ad := &Adoption{ID: newReplicaID() + newReplicaID(), Identities: slices.Compact(ids), DeleteUnknown: o.DeleteUnknown,
		Revision: rev, At: time.Now().UTC()}
	data, err := json.Marshal(ad)
	if err != nil {
		return nil, err
	}
	if _, err := st.Put(ctx, store.AdoptionKey, data); err != nil {
		return nil, fmt.Errorf("record the adoption: %w", err)
	}
	return ad, nil
}

// readAdoption returns the stored adoption; nil when there is none.
func readAdoption(ctx context.Context, st Store) (*Adoption, error) {
	kv, err := st.Get(ctx, store.AdoptionKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the adoption: %w", err)
	}
	ad := &Adoption{}
	if err := json.Unmarshal(kv.Value, ad); err != nil {
		return nil, fmt.Errorf("decode the adoption %s: %w", kv.Key, err)
	}
	return ad, nil
}

// Adoption returns the latest adoption, nil when there has been none. It
// is read at start and again every PersistInterval (another replica may
// record one).
func (a *Authority) Adoption() *Adoption {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.adoption
}

// Epoch returns the store's epoch, sent to agents in Welcome.
func (a *Authority) Epoch() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.epoch
}

// refreshAdoption reads the stored adoption again.
func (a *Authority) refreshAdoption(ctx context.Context) error {
	ad, err := readAdoption(ctx, a.st)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.adoption = ad
	a.mu.Unlock()
	return nil
}
