package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	agentv1 "github.com/tetherproj/tether/api/gen/tether/agent/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// ErrCorrupt is returned by Load for a state file that does not parse. The
// error names the file; the agent refuses to start rather than forget works.
var ErrCorrupt = errors.New("state: corrupt state file")

// formatVersion is the version of the file layout; Load refuses others.
const formatVersion = 1

// File and directory names under <data-dir>/state.
const (
	stateDir    = "state"
	worksDir    = "works"
	hubFile     = "hub.json"
	digestsFile = "digests.json"
	tempPrefix  = ".tmp-"
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
	// Works are the works held, by key.
	Works map[string]Held
	// Digests are the status digests last reported, by work key.
	Digests map[string]Digest
}

// Store reads and writes the state under one data directory. Its methods
// are not safe for concurrent use; the agent serializes them.
type Store struct {
	dir string // <data-dir>/state
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
	return &Store{dir: dir}, nil
}

// Dir returns the directory the state lives in.
func (s *Store) Dir() string { return s.dir }

type hubDoc struct {
	FormatVersion int    `json:"format_version"`
	HubIdentity   string `json:"hub_identity"`
}

type workDoc struct {
	FormatVersion int             `json:"format_version"`
	Key           string          `json:"work_key"`
	Hub           string          `json:"hub_identity"`
	OrphanedSince *time.Time      `json:"orphaned_since,omitempty"`
	Upsert        json.RawMessage `json:"upsert"` // protojson of WorkUpsert
}

type digestsDoc struct {
	FormatVersion int               `json:"format_version"`
	Digests       map[string]Digest `json:"digests"`
}

// Load reads the whole state. Missing files are an empty state; a file
// that does not parse is ErrCorrupt.
func (s *Store) Load() (Snapshot, error) {
	snap := Snapshot{Works: map[string]Held{}, Digests: map[string]Digest{}}
	removeTemps(s.dir)
	var hub hubDoc
	if err := s.read(filepath.Join(s.dir, hubFile), &hub, func() int { return hub.FormatVersion }); err != nil {
		return Snapshot{}, err
	}
	snap.HubIdentity = hub.HubIdentity
	dd := digestsDoc{Digests: map[string]Digest{}}
	if err := s.read(filepath.Join(s.dir, digestsFile), &dd, func() int { return dd.FormatVersion }); err != nil {
		return Snapshot{}, err
	}
	for k, d := range dd.Digests {
		snap.Digests[k] = d
	}
	works, err := s.loadWorks()
	if err != nil {
		return Snapshot{}, err
	}
	snap.Works = works
	return snap, nil
}

func (s *Store) loadWorks() (map[string]Held, error) {
	dir := filepath.Join(s.dir, worksDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("state: read %s: %w", dir, err)
	}
	works := make(map[string]Held, len(entries))
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), tempPrefix) {
			_ = os.Remove(path) // left by a write that did not finish
			continue
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		h, err := s.loadWork(path)
		if err != nil {
			return nil, err
		}
		works[h.Work.Key] = h
	}
	return works, nil
}

func (s *Store) loadWork(path string) (Held, error) {
	var doc workDoc
	if err := s.read(path, &doc, func() int { return doc.FormatVersion }); err != nil {
		return Held{}, err
	}
	var u agentv1.WorkUpsert
	if err := protojson.Unmarshal(doc.Upsert, &u); err != nil {
		return Held{}, corrupt(path, err)
	}
	if doc.Key == "" || u.GetWorkKey() != doc.Key || filepath.Base(path) != fileName(doc.Key) {
		return Held{}, corrupt(path, fmt.Errorf("work key %q does not match the file's content or name", doc.Key))
	}
	h := Held{Work: FromUpsert(&u), Hub: doc.Hub}
	if doc.OrphanedSince != nil {
		h.OrphanedSince = *doc.OrphanedSince
	}
	return h, nil
}

// read decodes the JSON file at path into v; a missing file leaves v as it
// is. version returns the decoded format version.
func (s *Store) read(path string, v any, version func() int) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state: read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return corrupt(path, err)
	}
	if got := version(); got != formatVersion {
		return corrupt(path, fmt.Errorf("format version %d, this agent reads %d", got, formatVersion))
	}
	return nil
}

// removeTemps removes the temporary files of writes that did not finish.
func removeTemps(dir string) {
	temps, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	for _, t := range temps {
		_ = os.Remove(t)
	}
}

func corrupt(path string, err error) error {
	return fmt.Errorf("%w %s: %v (the agent will not start on state it cannot read: "+
		"restore the file, or move it away to drop what it held)", ErrCorrupt, path, err)
}

// PutHub records the identity of the hub last welcomed.
func (s *Store) PutHub(identity string) error {
	return s.write(filepath.Join(s.dir, hubFile), hubDoc{FormatVersion: formatVersion, HubIdentity: identity})
}

// PutWork records h, replacing what is held under its key.
func (s *Store) PutWork(h Held) error {
	u, err := protojson.Marshal(h.Work.Upsert())
	if err != nil {
		return fmt.Errorf("state: encode work %q: %w", h.Work.Key, err)
	}
	doc := workDoc{FormatVersion: formatVersion, Key: h.Work.Key, Hub: h.Hub, Upsert: u}
	if h.Orphaned() {
		t := h.OrphanedSince.UTC()
		doc.OrphanedSince = &t
	}
	return s.write(filepath.Join(s.dir, worksDir, fileName(h.Work.Key)), doc)
}

// DeleteWork forgets the work under key; an unknown key is not an error.
func (s *Store) DeleteWork(key string) error {
	path := filepath.Join(s.dir, worksDir, fileName(key))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: remove %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// PutDigests replaces the recorded status digests with d.
func (s *Store) PutDigests(d map[string]Digest) error {
	return s.write(filepath.Join(s.dir, digestsFile), digestsDoc{FormatVersion: formatVersion, Digests: d})
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
