// k8s_render: renders a Helm chart the way `helm template` does, for the offline deployment test
// (tests/deploy/test_kubernetes.py). helm is not packaged in Debian 12, but its template engine is
// Go's text/template with the sprig function library (Debian: golang-github-masterminds-sprig-dev)
// plus a few functions of its own, which are written again here from Helm's documentation.
//
// What it does as helm does: values.yaml coalesced with -f files (maps merged, a null deletes a key,
// lists replaced), read with sigs.k8s.io/yaml (so numbers are float64 as in helm); .Values,
// .Release, .Chart (Chart.yaml keys with Helm's field names), .Capabilities, .Template; every file
// of templates/ parsed into one template set ("_" files define only), missingkey=zero and
// "<no value>" removed; sprig without env/expandenv; include, tpl, required, toYaml, fromYaml,
// toJson, fromJson, lookup (empty, as in `helm template`); output as "---\n# Source: PATH\n" documents
// in file name order; NOTES.txt on request.
// What it does not: subcharts and dependencies, .Files, hooks, CRDs in crds/, install ordering by
// kind, `helm lint`, values.schema.json (the Python test validates that), --set flags.
//
// Usage: k8s_render -chart DIR [-f VALUES]... [-name RELEASE] [-namespace NS]
//
//	[-values-out FILE] [-notes-out FILE]
//
// Exit status: 0 rendered, 1 a template failed (the message on stderr), 2 bad usage or input.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
)

type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

// capabilities stands in for helm's chartutil.Capabilities; APIVersions.Has answers as a client
// without a cluster does (helm template's defaults: the built-in API groups, no CRDs).
type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

type kubeVersion struct{ Version, Major, Minor string }

func (k kubeVersion) String() string { return k.Version }

type capabilities struct {
	KubeVersion kubeVersion
	APIVersions apiVersions
}

func readYAMLMap(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// coalesce merges src over dst as helm's chartutil.CoalesceTables does for user values: maps merge
// key by key, a null in src deletes the key, anything else replaces.
func coalesce(dst, src map[string]interface{}) map[string]interface{} {
	for key, value := range src {
		if value == nil {
			delete(dst, key)
			continue
		}
		srcMap, srcIsMap := value.(map[string]interface{})
		dstMap, dstIsMap := dst[key].(map[string]interface{})
		if srcIsMap && dstIsMap {
			dst[key] = coalesce(dstMap, srcMap)
		} else {
			dst[key] = value
		}
	}
	return dst
}

// chartMetadata maps Chart.yaml's keys to the field names templates use (.Chart.AppVersion, ...).
func chartMetadata(raw map[string]interface{}) (map[string]interface{}, error) {
	names := map[string]string{
		"apiVersion": "APIVersion", "name": "Name", "version": "Version", "appVersion": "AppVersion",
		"description": "Description", "type": "Type", "kubeVersion": "KubeVersion", "keywords": "Keywords",
		"home": "Home", "sources": "Sources", "maintainers": "Maintainers", "icon": "Icon",
		"annotations": "Annotations", "deprecated": "Deprecated", "dependencies": "Dependencies",
	}
	out := map[string]interface{}{}
	for key, value := range raw {
		field, ok := names[key]
		if !ok {
			return nil, fmt.Errorf("Chart.yaml: unknown key %q", key)
		}
		if key == "dependencies" {
			return nil, errors.New("Chart.yaml: dependencies are not supported by this renderer")
		}
		out[field] = value
	}
	for _, field := range []string{"APIVersion", "Name", "Version"} {
		if _, ok := out[field]; !ok {
			return nil, fmt.Errorf("Chart.yaml: %s is required", field)
		}
	}
	return out, nil
}

func toYAML(v interface{}) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}

func fromYAML(s string) map[string]interface{} {
	out := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		out["Error"] = err.Error()
	}
	return out
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func fromJSON(s string) map[string]interface{} {
	out := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		out["Error"] = err.Error()
	}
	return out
}

// funcMap: sprig's text functions less env and expandenv (helm removes them), plus helm's own.
func funcMap(root *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["fromYaml"] = fromYAML
	f["toJson"] = toJSON
	f["fromJson"] = fromJSON
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		if t, err = t.New("tpl").Parse(text); err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	f["required"] = func(message string, value interface{}) (interface{}, error) {
		if value == nil {
			return nil, errors.New(message)
		}
		if s, ok := value.(string); ok && s == "" {
			return nil, errors.New(message)
		}
		return value, nil
	}
	f["lookup"] = func(string, string, string, string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	return f
}

func run() (int, error) {
	var files valueFiles
	chartDir := flag.String("chart", "", "chart directory")
	release := flag.String("name", "release-name", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	valuesOut := flag.String("values-out", "", "write the coalesced values as JSON here")
	notesOut := flag.String("notes-out", "", "render templates/NOTES.txt here")
	flag.Var(&files, "f", "values file (repeatable; later ones win)")
	flag.Parse()
	if *chartDir == "" || flag.NArg() != 0 {
		return 2, errors.New("usage: k8s_render -chart DIR [-f VALUES]... [-name R] [-namespace NS]")
	}
	rawChart, err := readYAMLMap(filepath.Join(*chartDir, "Chart.yaml"))
	if err != nil {
		return 2, err
	}
	chart, err := chartMetadata(rawChart)
	if err != nil {
		return 2, err
	}
	values, err := readYAMLMap(filepath.Join(*chartDir, "values.yaml"))
	if err != nil {
		return 2, err
	}
	for _, path := range files {
		user, err := readYAMLMap(path)
		if err != nil {
			return 2, err
		}
		values = coalesce(values, user)
	}
	if *valuesOut != "" {
		data, _ := json.MarshalIndent(values, "", "  ")
		if err := os.WriteFile(*valuesOut, append(data, '\n'), 0o644); err != nil {
			return 2, err
		}
	}

	chartName := chart["Name"].(string)
	templatesDir := filepath.Join(*chartDir, "templates")
	entries, err := os.ReadDir(templatesDir)
	if err != nil {
		return 2, err
	}
	root := template.New("gotpl").Option("missingkey=zero")
	root.Funcs(funcMap(root))
	var names []string
	for _, entry := range entries {
		if entry.IsDir() {
			return 2, fmt.Errorf("%s: subfolders of templates/ are not supported", entry.Name())
		}
		text, err := os.ReadFile(filepath.Join(templatesDir, entry.Name()))
		if err != nil {
			return 2, err
		}
		name := chartName + "/templates/" + entry.Name()
		if _, err := root.New(name).Parse(string(text)); err != nil {
			return 1, err
		}
		names = append(names, name)
	}
	sort.Strings(names)

	top := map[string]interface{}{
		"Values": values,
		"Chart":  chart,
		"Release": map[string]interface{}{
			"Name": *release, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": capabilities{
			KubeVersion: kubeVersion{Version: "v1.22.0", Major: "1", Minor: "22"},
			APIVersions: apiVersions{"v1", "apps/v1", "policy/v1", "rbac.authorization.k8s.io/v1"},
		},
		"Files": map[string]interface{}{},
	}
	render := func(name string) (string, error) {
		top["Template"] = map[string]interface{}{"Name": name, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, top); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}

	var out strings.Builder
	for _, name := range names {
		base := filepath.Base(name)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		text, err := render(name)
		if err != nil {
			return 1, err
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", name, strings.TrimSpace(text))
	}
	if *notesOut != "" {
		notes := ""
		if root.Lookup(chartName+"/templates/NOTES.txt") != nil {
			if notes, err = render(chartName + "/templates/NOTES.txt"); err != nil {
				return 1, err
			}
		}
		if err := os.WriteFile(*notesOut, []byte(notes), 0o644); err != nil {
			return 2, err
		}
	}
	fmt.Print(out.String())
	return 0, nil
}

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s_render:", err)
	}
	os.Exit(code)
}
