package kafkabpl_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// layers is what each of the module's packages may import of the module,
// bottom up (docs/go.md, "Packages"): a package imports only packages below
// it, so that the evaluator embeds without Kafka and the clients without
// the evaluator. A new package gets its line here.
var layers = map[string][]string{
	"value":                          {},
	"internal/topicname":             {},
	"internal/benchloop":             {},
	"internal/browsertest":           {},
	"internal/words":                 {},
	"internal/box":                   {},
	"internal/testdial":              {},
	"internal/pbdesc":                {},
	"internal/registry":              {"internal/pbdesc"},
	"internal/registry/registrytest": {}, // by tests only
	"bpl":                            {"value", "internal/box"},
	"serde":                          {"value", "internal/pbdesc"},
	"internal/store":                 {"value", "serde"},
	"internal/murmur2":               {},
	"":                               {"value", "serde", "internal/store", "internal/topicname", "internal/words", "internal/box", "internal/testdial"},
	"stream":                         {"", "value", "serde", "internal/store", "internal/topicname", "internal/murmur2"},
	"embedded":                       {"internal/topicname", "internal/registry"},
	"internal/testkit":               {"value", "embedded", "internal/testdial"}, // by tests only
	"internal/grouptest":             {"", "internal/testkit"},                   // by tests only
	"functions":                      {"value", "serde", "", "stream", "internal/words", "internal/box"},
	"metrics":                        {"", "stream"},
	"streamtest":                     {"", "stream", "value", "bpl", "functions"},
	"server":                         {"value", "bpl", "", "stream", "functions"},
	"internal/scripttest":            {}, // what kafkabpl test and kafkabpl-test say of themselves
	"cmd/kafkabpl":                   {"value", "bpl", "", "stream", "functions", "embedded", "server", "metrics", "internal/scripttest"},
	"cmd/kafkabpl-test":              {"streamtest", "internal/scripttest"},
	"bench/interp":                   {"value", "bpl"}, // the evaluator beside brain4it's Java interpreter
}

const module = "github.com/brain4it/kafkabpl"

// goList runs go list in the module's root with args.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goCmd, append([]string{"list"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// rel is a package's path within the module ("" for the root), and
// whether it is in the module.
func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

func TestLayers(t *testing.T) {
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		allowed, known := layers[pkg]
		if !known {
			t.Errorf("package %q has no line in layers: say what it may import", fields[0])
			continue
		}
		for _, imp := range fields[1:] {
			if r, ok := rel(imp); ok && !slices.Contains(allowed, r) {
				t.Errorf("%s imports %s, above it or beside it in the layers", fields[0], imp)
			}
		}
	}
}

// TestEvaluatorWithoutKafka checks that embedding the evaluator brings in
// the standard library, package value and internal/box (which imports
// nothing but unsafe) alone: no franz-go, no Avro, no Protobuf.
func TestEvaluatorWithoutKafka(t *testing.T) {
	for _, pkg := range []string{"./value", "./bpl"} {
		for _, dep := range goList(t, "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`, pkg) {
			if r, ok := rel(dep); dep != "" && (!ok || r != "value" && r != "bpl" && r != "internal/box") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
