package thirdparty

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
)

// files holds the customization documents, one RIC per file.
//
//go:embed */*.yaml
var files embed.FS

// NamedYAML is one embedded customization file: its path inside the package
// (e.g. "kruise/cloneset.yaml") and its content.
type NamedYAML struct {
	Name string
	Data []byte
}

// Customizations returns every embedded customization file, sorted by name.
func Customizations() ([]NamedYAML, error) {
	var out []NamedYAML
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, NamedYAML{Name: path, Data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("thirdparty: read embedded customizations: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// FS returns the embedded files, for consumers that walk them themselves.
func FS() fs.FS { return files }
