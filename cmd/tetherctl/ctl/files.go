package ctl

// -f: the manifest files a command reads. Repeated like kubectl's (-f a.yaml
// -f b.yaml), each a file, a directory or "-" for standard input; all of them
// are read, in the order given, as one multi-document stream.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
)

// filenameHelp is the help of a repeated -f flag.
const filenameHelp = `file, directory (its .yaml, .yml and .json files) or "-" for standard input; repeat for more`

// addFilenameFlag adds the repeated -f flag to cmd.
func addFilenameFlag(cmd *cobra.Command, files *[]string, help string) {
	cmd.Flags().StringArrayVarP(files, "filename", "f", nil, help)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// readManifests reads every -f in order (files, the manifest files of
// directories, standard input for "-") as one multi-document stream.
// Standard input can be named once only: a second "-" would read nothing.
func readManifests(paths []string, in io.Reader) ([]byte, error) {
	if n := countOf(paths, "-"); n > 1 {
		return nil, fmt.Errorf(`-f -: standard input named %d times; name it once`, n)
	}
	var docs [][]byte
	for _, p := range paths {
		data, err := readManifest(p, in)
		if err != nil {
			return nil, err
		}
		docs = append(docs, data)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no -f given")
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

func countOf(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// readManifest reads one -f: a file, the manifest files of a directory
// (not recursing), or standard input.
func readManifest(path string, in io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(in)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return os.ReadFile(path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, e := range entries {
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		docs = append(docs, data)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json files", path)
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

// oneFile is the -f of a command that reads a single input file: it
// refuses a second -f rather than silently keeping the last.
type oneFile struct {
	path *string
	set  bool
}

// addOneFileFlag adds a single-valued -f flag to cmd, bound to path.
func addOneFileFlag(cmd *cobra.Command, path *string, help string) {
	cmd.Flags().VarP(&oneFile{path: path}, "filename", "f", help)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

func (f *oneFile) Set(v string) error {
	if f.set {
		return fmt.Errorf("-f given twice (%s and %s): this command reads one file", *f.path, v)
	}
	*f.path, f.set = v, true
	return nil
}

func (f *oneFile) String() string {
	if f.path == nil {
		return ""
	}
	return *f.path
}

func (f *oneFile) Type() string { return "string" }
