package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"github.com/tetherproj/tether/internal/durable"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// ErrCorrupt is returned by Load for a state blob (a file, or a key of the
// Secret) that does not parse. The error names it; the agent refuses to
// start rather than forget works.
var ErrCorrupt = errors.New("state: corrupt state file")

// formatVersion is the version of the file layout; Load refuses others.
// A work's record has versions of its own (workFormatVersion).
const formatVersion = 1

// workFormatVersion is the version of a work's record that PutWork
// writes. 3 is a line of JSON (the record's fields), a newline, and the
// work's upsert as protobuf bytes; 2 was one JSON object with the upsert
// as protobuf in base64 (upsert_proto), 1 with it as protojson (upsert).
// Load reads all three. Encoding protojson took most of an agent's time
// per work received (issue 16), and base64 and its JSON string a third
// more bytes and most of the time left.
const workFormatVersion = 3

// File and directory names under <data-dir>/state; the blob names are the
// same (backend.go).
const (
	stateDir    = "state"
	worksDir    = "works"
	hubFile     = "hub.json"
	digestsFile = "digests.json"
	// customizationsFile holds the interpreter customizations.
	customizationsFile = "customizations.json"
	tempPrefix         = durable.TempPrefix
)

// Held is one work the agent holds, with where it came from.
type Held struct {
	// Work is the work's content and version.
	Work Work
	// Hub is the identity of the hub that sent the work.
	Hub string
	// OrphanedSince is when the work was found unclaimed: held from a hub
	// identity other than the current one, or not mentioned by the hub's
	// initial sync. Zero while the hub claims it. An orphaned work is
	// evicted once it has been orphaned for the grace period.
	OrphanedSince time.Time
	// Unmanaged is set for a work an adopting hub did not have: it stays
	// in the member as it is, never applied, deleted or evicted by the
	// agent, and is listed in its heartbeats, until a hub sends its key
	// again (which claims it).
	Unmanaged bool
	// Removal, when set, is the deletion decided for the work and not yet
	// done: the agent carries it out (again, after a restart) and never
	// applies this version again.
	Removal *Removal
}

// Orphaned reports whether h is unclaimed.
func (h Held) Orphaned() bool { return !h.OrphanedSince.IsZero() }

// Digest is the last status reported for one work.
type Digest struct {
	// Version is the work version the status described.
	Version string
	// Digest is the report's digest.
	Digest string
}

// Snapshot is everything Load read.
type Snapshot struct {
	// HubIdentity is the identity of the hub last welcomed; empty on first
	// start.
	HubIdentity string
	// Lineage is what the agent saw of that hub's store.
	Lineage Lineage
	// Works are the works held, by key.
	Works map[string]Held
	// Digests are the status digests last reported, by work key.
	Digests map[string]Digest
	// Customizations are the interpreter customizations the hub last sent;
	// nil when it never sent any.
	Customizations *agentv1.Customizations
}

// Store reads and writes the state through one Backend. Its methods are
// safe for concurrent use: they take turns on the backend. Each takes a
// context, which bounds its I/O (and at most backendTimeout).
type Store struct {
	dir string // <data-dir>/state with the directory backend, else empty

	mu sync.Mutex // guards b: one backend call at a time
	b  Backend
}

// Open returns the store of dataDir, creating its directories.
func Open(dataDir string) (*Store, error) {
	if dataDir == "" {
		return nil, errors.New("state: no data directory")
	}
	dir := filepath.Join(dataDir, stateDir)
	if err := os.MkdirAll(filepath.Join(dir, worksDir), 0o700); err != nil {
		return nil, fmt.Errorf("state: create %s: %w", dir, err)
	}
	return &Store{b: dirBackend{dir: dir}, dir: dir}, nil
}

// New returns the store that keeps its state in b.
func New(b Backend) *Store { return &Store{b: b} }

// Dir returns the directory the state lives in; empty when the store was
// not opened on a directory.
func (s *Store) Dir() string { return s.dir }

type hubDoc struct {
	FormatVersion int    `json:"format_version"`
	HubIdentity   string `json:"hub_identity"`
	Lineage
}

type workDoc struct {
	FormatVersion int         `json:"format_version"`
	Key           string      `json:"work_key"`
	Hub           string      `json:"hub_identity"`
	OrphanedSince *time.Time  `json:"orphaned_since,omitempty"`
	Unmanaged     bool        `json:"unmanaged,omitempty"`
	Removal       *removalDoc `json:"removal,omitempty"`
	// UpsertProto is the WorkUpsert in protobuf (version 2), Upsert in
	// protojson (version 1); version 3 has it after the JSON's line.
	UpsertProto []byte          `json:"upsert_proto,omitempty"`
	Upsert      json.RawMessage `json:"upsert,omitempty"`
}

type digestsDoc struct {
	FormatVersion int               `json:"format_version"`
	Digests       map[string]Digest `json:"digests"`
}

// Load reads the whole state. Missing blobs are an empty state; a blob
// that does not parse is ErrCorrupt.
func (s *Store) Load(ctx context.Context) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, backendTimeout)
	defer cancel()
	s.mu.Lock()
	blobs, err := s.b.ReadAll(ctx)
	s.mu.Unlock()
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Works: map[string]Held{}, Digests: map[string]Digest{}}
	var hub hubDoc
	if err := s.decode(blobs, hubBlob, &hub, func() int { return hub.FormatVersion }, formatVersion); err != nil {
		return Snapshot{}, err
	}
	snap.HubIdentity, snap.Lineage = hub.HubIdentity, hub.Lineage
	dd := digestsDoc{Digests: map[string]Digest{}}
	if err := s.decode(blobs, digestsBlob, &dd, func() int { return dd.FormatVersion }, formatVersion); err != nil {
		return Snapshot{}, err
	}
	for k, d := range dd.Digests {
		snap.Digests[k] = d
	}
	if snap.Customizations, err = s.loadCustomizations(blobs); err != nil {
		return Snapshot{}, err
	}
	names := make([]string, 0, len(blobs))
	for name := range blobs {
		if strings.HasPrefix(name, worksPrefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		h, err := s.loadWork(blobs, name)
		if err != nil {
			return Snapshot{}, err
		}
		snap.Works[h.Work.Key] = h
	}
	return snap, nil
}

func (s *Store) loadWork(blobs map[string][]byte, name string) (Held, error) {
	head, upsert, _ := bytes.Cut(blobs[name], []byte{'\n'})
	var doc workDoc
	if err := s.decodeData(name, head, &doc, func() int { return doc.FormatVersion }, workFormatVersion); err != nil {
		return Held{}, err
	}
	var u agentv1.WorkUpsert
	var err error
	switch {
	case doc.FormatVersion < 3 && len(bytes.TrimSpace(upsert)) > 0:
		err = fmt.Errorf("format version %d with bytes after its JSON", doc.FormatVersion)
	case doc.FormatVersion == 1:
		err = protojson.Unmarshal(doc.Upsert, &u)
	case doc.FormatVersion == 2:
		err = proto.Unmarshal(doc.UpsertProto, &u)
	default:
		err = proto.Unmarshal(upsert, &u)
	}
	if err != nil {
		return Held{}, s.corrupt(name, err)
	}
	if doc.Key == "" || u.GetWorkKey() != doc.Key || name != workBlob(doc.Key) {
		return Held{}, s.corrupt(name, fmt.Errorf("work key %q does not match the blob's content or name", doc.Key))
	}
	h := Held{Work: FromUpsert(&u), Hub: doc.Hub, Unmanaged: doc.Unmanaged}
	if doc.OrphanedSince != nil {
		h.OrphanedSince = *doc.OrphanedSince
	}
	if doc.Removal != nil {
		r, err := doc.Removal.removal()
		if err != nil {
			return Held{}, s.corrupt(name, err)
		}
		h.Removal = &r
	}
	return h, nil
}

// decode decodes the JSON blob name into v; a missing blob leaves v as it
// is. version returns the decoded format version, which must be from 1 to
// newest.
func (s *Store) decode(blobs map[string][]byte, name string, v any, version func() int, newest int) error {
	data, ok := blobs[name]
	if !ok {
		return nil
	}
	return s.decodeData(name, data, v, version, newest)
}

// decodeData is decode of the blob name's data.
func (s *Store) decodeData(name string, data []byte, v any, version func() int, newest int) error {
	if err := json.Unmarshal(data, v); err != nil {
		return s.corrupt(name, err)
	}
	if got := version(); got < 1 || got > newest {
		return s.corrupt(name, fmt.Errorf("format version %d, this agent reads %s", got, versions(newest)))
	}
	return nil
}

// versions names the format versions from 1 to last.
func versions(last int) string {
	if last == 1 {
		return "1"
	}
	return fmt.Sprintf("1 to %d", last)
}

// corrupt is the ErrCorrupt of blob name, naming where it is.
func (s *Store) corrupt(name string, err error) error {
	return fmt.Errorf("%w %s: %v (the agent will not start on state it cannot read: "+
		"restore it, or remove it to drop what it held)", ErrCorrupt, s.b.Where(name), err)
}

// write stores v as JSON in the blob name.
func (s *Store) write(ctx context.Context, name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("state: encode %s: %w", s.b.Where(name), err)
	}
	return s.put(ctx, name, data)
}

// put stores data in the blob name.
func (s *Store) put(ctx context.Context, name string, data []byte) error {
	return s.turn(ctx, "write", name, func(ctx context.Context) error { return s.b.Write(ctx, name, data) })
}

// turn runs op, a backend call on the blob name, in the store's turn and
// within ctx and backendTimeout; verb names it when ctx ended while it
// waited.
func (s *Store) turn(ctx context.Context, verb, name string, op func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, backendTimeout)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil { // given up while waiting for its turn
		return fmt.Errorf("state: %s %s: %w", verb, s.b.Where(name), err)
	}
	return op(ctx)
}

// PutHub records the identity of the hub last welcomed and the lineage of
// its store.
func (s *Store) PutHub(ctx context.Context, identity string, l Lineage) error {
	return s.write(ctx, hubBlob, hubDoc{FormatVersion: formatVersion, HubIdentity: identity, Lineage: l})
}

// PutWork records h, replacing what is held under its key. With
// h.Removal set it is the record of a pending deletion: written before the
// deletion starts.
func (s *Store) PutWork(ctx context.Context, h Held) error {
	doc := workDoc{FormatVersion: workFormatVersion, Key: h.Work.Key, Hub: h.Hub, Unmanaged: h.Unmanaged}
	if h.Orphaned() {
		t := h.OrphanedSince.UTC()
		doc.OrphanedSince = &t
	}
	if h.Removal != nil {
		doc.Removal = h.Removal.doc()
	}
	head, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("state: encode work %q: %w", h.Work.Key, err)
	}
	data, err := proto.MarshalOptions{}.MarshalAppend(append(head, '\n'), h.Work.Upsert())
	if err != nil {
		return fmt.Errorf("state: encode work %q: %w", h.Work.Key, err)
	}
	return s.put(ctx, workBlob(h.Work.Key), data)
}

// DeleteWork forgets the work under key; an unknown key is not an error.
func (s *Store) DeleteWork(ctx context.Context, key string) error {
	name := workBlob(key)
	return s.turn(ctx, "delete", name, func(ctx context.Context) error { return s.b.Delete(ctx, name) })
}

// PutDigests replaces the recorded status digests with d.
func (s *Store) PutDigests(ctx context.Context, d map[string]Digest) error {
	return s.write(ctx, digestsBlob, digestsDoc{FormatVersion: formatVersion, Digests: d})
}

// Keys returns the keys of works, sorted.
func Keys(works map[string]Held) []string {
	keys := make([]string, 0, len(works))
	for k := range works {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fileName is the file of a work key: keys may hold any character, so the
// name is their hash.
func fileName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:]) + ".json"
}
