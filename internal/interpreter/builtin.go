package interpreter

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	configv1alpha1 "github.com/tetherproj/tether/api/config/v1alpha1"
	"github.com/tetherproj/tether/internal/interpreter/thirdparty"
)

// BuiltinCustomizations decodes the built-in third-party customizations
// embedded by package thirdparty (OpenKruise and others, written by us).
func BuiltinCustomizations() ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	return loadCustomizationsFS(thirdparty.FS(), ".")
}

// loadCustomizationsFS decodes every *.yaml file under root, skipping
// testdata directories, in lexical path order.
func loadCustomizationsFS(fsys fs.FS, root string) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	var out []configv1alpha1.ResourceInterpreterCustomization
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".yaml") {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		cs, err := DecodeCustomizations(data)
		if err != nil {
			return fmt.Errorf("built-in customization %s: %w", path.Clean(p), err)
		}
		out = append(out, cs...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load built-in customizations: %w", err)
	}
	return out, nil
}
