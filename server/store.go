package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

// ErrNoSnapshot is wrapped by Store.Read's error when the snapshot does
// not exist.
var ErrNoSnapshot = errors.New("server: no such snapshot")

// Snapshot describes a saved snapshot of a module, as module-snapshots
// lists them.
type Snapshot struct {
	Name         string
	LastModified time.Time
	Length       int64
}

// Store keeps modules' snapshots, the printed scopes module-save writes,
// as brain4it's stores do: per module, by snapshot name ("head" is the
// one loaded at start). Implementations must be safe for concurrent use.
type Store interface {
	// Modules lists the modules that have a snapshot directory.
	Modules() ([]string, error)
	// Read returns a snapshot's text; the error wraps ErrNoSnapshot when
	// there is none.
	Read(module, snapshot string) ([]byte, error)
	// Write saves a snapshot, replacing one of the same name whole
	// (a reader never sees half of it).
	Write(module, snapshot string, data []byte) error
	// Rename renames a snapshot (module-save's backup).
	Rename(module, from, to string) error
	// List lists the snapshots whose name matches pattern, where *
	// matches any text ("" or "*" lists all), sorted by name.
	List(module, pattern string) ([]Snapshot, error)
	// Delete deletes the snapshots matching pattern.
	Delete(module, pattern string) (int, error)
	// DeleteModule deletes a module's snapshots and directory.
	DeleteModule(module string) error
}

// snapshotExt is the extension of a snapshot's file, as brain4it's.
const snapshotExt = ".snp"

// DirStore is a Store in a directory: DIR/MODULE/SNAPSHOT.snp, the layout
// of brain4it's FileSystemStore, so a brain4it server's module directory
// can be copied in.
type DirStore struct {
	Dir string
}

// Modules lists the subdirectories of Dir; a missing Dir has none.
func (s DirStore) Modules() ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("server: listing modules: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && validModuleName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func (s DirStore) file(module, snapshot string) string {
	return filepath.Join(s.Dir, module, snapshot+snapshotExt)
}

// Read reads DIR/module/snapshot.snp.
func (s DirStore) Read(module, snapshot string) ([]byte, error) {
	b, err := os.ReadFile(s.file(module, snapshot))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, noSnapshot(s.file(module, snapshot))
	}
	return b, err
}

// Write writes to a temporary file, then renames it into place.
func (s DirStore) Write(module, snapshot string, data []byte) error {
	dir := filepath.Join(s.Dir, module)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("server: saving module %s: %w", module, err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("server: saving module %s: %w", module, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.file(module, snapshot))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("server: saving module %s: %w", module, err)
	}
	return nil
}

// Rename renames a snapshot file.
func (s DirStore) Rename(module, from, to string) error {
	return os.Rename(s.file(module, from), s.file(module, to))
}

// List lists the module's snapshot files.
func (s DirStore) List(module, pattern string) ([]Snapshot, error) {
	ents, err := os.ReadDir(filepath.Join(s.Dir, module))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Snapshot
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), snapshotExt)
		if !ok || e.IsDir() || !matchPattern(pattern, name) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Snapshot{Name: name, LastModified: info.ModTime(), Length: info.Size()})
	}
	return out, nil
}

// Delete deletes the matching snapshot files.
func (s DirStore) Delete(module, pattern string) (int, error) {
	snaps, err := s.List(module, pattern)
	if err != nil {
		return 0, err
	}
	for _, sn := range snaps {
		if err := os.Remove(s.file(module, sn.Name)); err != nil {
			return 0, err
		}
	}
	return len(snaps), nil
}

// DeleteModule removes DIR/module.
func (s DirStore) DeleteModule(module string) error {
	return os.RemoveAll(filepath.Join(s.Dir, module))
}

// MemStore is a Store in memory, lost when the process ends: the store of
// a server without a data directory. The zero MemStore is ready.
type MemStore struct {
	mu sync.Mutex
	m  map[string]map[string]memSnap
}

type memSnap struct {
	data []byte
	mod  time.Time
}

// Modules lists the modules with snapshots.
func (s *MemStore) Modules() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// Read returns a copy of the snapshot.
func (s *MemStore) Read(module, snapshot string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.m[module][snapshot]
	if !ok {
		return nil, noSnapshot(module + "/" + snapshot + snapshotExt)
	}
	return append([]byte(nil), sn.data...), nil
}

// Write keeps a copy of data.
func (s *MemStore) Write(module, snapshot string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string]memSnap{}
	}
	if s.m[module] == nil {
		s.m[module] = map[string]memSnap{}
	}
	s.m[module][snapshot] = memSnap{append([]byte(nil), data...), time.Now()}
	return nil
}

// Rename renames a snapshot.
func (s *MemStore) Rename(module, from, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sn, ok := s.m[module][from]
	if !ok {
		return noSnapshot(module + "/" + from + snapshotExt)
	}
	delete(s.m[module], from)
	s.m[module][to] = sn
	return nil
}

// List lists the matching snapshots.
func (s *MemStore) List(module, pattern string) ([]Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Snapshot
	for name, sn := range s.m[module] {
		if matchPattern(pattern, name) {
			out = append(out, Snapshot{Name: name, LastModified: sn.mod, Length: int64(len(sn.data))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Delete deletes the matching snapshots.
func (s *MemStore) Delete(module, pattern string) (int, error) {
	snaps, _ := s.List(module, pattern)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range snaps {
		delete(s.m[module], sn.Name)
	}
	return len(snaps), nil
}

// DeleteModule forgets the module.
func (s *MemStore) DeleteModule(module string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, module)
	return nil
}

// matchPattern matches brain4it's snapshot patterns: * is any text.
func matchPattern(pattern, name string) bool {
	if pattern == "" {
		return true
	}
	// path.Match's other metacharacters are taken literally
	r := strings.NewReplacer(`\`, `\\`, `?`, `\?`, `[`, `\[`)
	ok, err := path.Match(r.Replace(pattern), name)
	return err == nil && ok
}

// validSnapshotName is brain4it's FileSystemStore.isValidPath for the
// snapshot's path, MODULE/NAME.snp: letters and digits, and /, _ or .,
// but never two of those in a row (so x_ and a..b are refused, and ..
// and / cannot leave the module's directory). A / within the name is
// refused too, where brain4it would write into a subdirectory.
func validSnapshotName(module, name string) bool {
	if name == "" || strings.Contains(name, "/") {
		return false
	}
	last := false // the last character was a separator
	for _, r := range module + "/" + name + snapshotExt {
		sep := r == '/' || r == '_' || r == '.'
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || sep && !last) {
			return false
		}
		last = sep
	}
	return true
}

// invalidSnapshot is brain4it's error for a snapshot name it refuses.
func invalidSnapshot(module, name string) error {
	return &javaError{typ: "IOException", msg: "Invalid path: " + module + "/" + name + snapshotExt}
}

// noSnapshot is the error of reading a snapshot that is not there, as
// brain4it's FileSystemStore raises it (Java's FileInputStream): file is
// the snapshot's file.
func noSnapshot(file string) error {
	return &javaError{typ: "FileNotFoundException", msg: file + " (No such file or directory)", is: ErrNoSnapshot}
}

// validModuleName is brain4it's rule: letters, digits and _ only.
func validModuleName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '_' && !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r > 127 && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}
