package functions

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
)

var updatePage = flag.Bool("update", false, "rewrite docs/functions.md from Reference")

// referencePage is the page generated from Reference.
const referencePage = "../docs/functions.md"

// TestReferenceCoversTable checks that Reference has an entry for every
// function of the table, and none for a function the table lacks.
func TestReferenceCoversTable(t *testing.T) {
	table := slices.Sorted(maps.Keys(Table(kafkabpl.New())))
	var ref []string
	for _, d := range Reference() {
		ref = append(ref, d.Name)
	}
	slices.Sort(ref)
	if !slices.Equal(table, ref) {
		t.Errorf("the table's functions %v\nReference's %v", table, ref)
	}
}

// TestReferenceChecksCalls checks that each function checks its calls
// against its entry: one positional argument too many, and an unknown
// named argument when it takes no other, are refused with an
// InvalidArgument that names the function and shows the entry's usage;
// and a handle the Library does not know raises one of the entry's
// errors.
func TestReferenceChecksCalls(t *testing.T) {
	lib := newLib(t)
	for _, d := range Reference() {
		if len(d.Args) > d.Max && d.Max < 1<<20 || d.Min > d.Max {
			t.Errorf("%s: %d arguments described, %d to %d taken", d.Name, len(d.Args), d.Min, d.Max)
		}
		if d.Max < 1<<20 {
			args := make([]any, d.Max+1)
			for i := range args {
				args[i] = "x"
			}
			_, err := call(t, lib, d.Name, args...)
			want := d.Name + ": want "
			if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; usage: "+d.Usage) ||
				kafkabpl.ErrorType(err) != "InvalidArgument" {
				t.Errorf("%s with %d arguments: %v, want an InvalidArgument %q... ending with its usage %s", d.Name, d.Max+1, err, want, d.Usage)
			}
		}
		if !d.AnyNamed {
			args := make([]any, d.Min, d.Min+1)
			for i := range args {
				args[i] = "x"
			}
			_, err := call(t, lib, d.Name, append(args, nv{"no-such-argument", 1})...)
			if err == nil || !strings.Contains(err.Error(), `unknown named argument "no-such-argument"`) || kafkabpl.ErrorType(err) != "InvalidArgument" {
				t.Errorf("%s with an unknown named argument: %v", d.Name, err)
			}
		}
		if len(d.Args) > 0 && d.Args[0].Name == "id" {
			args := []any{"p00000000000000000000000000000000"}
			for i := 1; i < d.Min; i++ {
				args = append(args, "x")
			}
			if d.Name == "kafka-poll" {
				args[len(args)-1] = int64(10)
			}
			_, err := call(t, lib, d.Name, args...)
			if typ := kafkabpl.ErrorType(err); err != nil && !slices.Contains(d.Errors, typ) && typ != "InvalidArgument" {
				t.Errorf("%s of an unknown handle raised %s (%v), which its entry's errors %v leave out", d.Name, typ, err, d.Errors)
			}
		}
	}
}

// TestReferencePage checks that docs/functions.md is what Reference
// generates; go test ./functions -run TestReferencePage -update rewrites
// it.
func TestReferencePage(t *testing.T) {
	got := referenceMarkdown(Reference())
	if *updatePage {
		if err := os.WriteFile(referencePage, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatalf("%v (go test ./functions -run TestReferencePage -update writes it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs from the function table at line %d:\n got %s\nwant %s\n(go test ./functions -run TestReferencePage -update rewrites it)", referencePage, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s has %d lines, the function table's page %d (go test ./functions -run TestReferencePage -update rewrites it)", referencePage, len(wl), len(gl))
	}
}

// referenceMarkdown is docs/functions.md.
func referenceMarkdown(docs []Doc) string {
	var b strings.Builder
	b.WriteString(`# BPL functions

The kafka- functions, as package ` + "`functions`" + ` registers them (` + "`functions.Table`" + `).
This page is generated from the function table's reference
(` + "`functions.Reference`" + `), which the functions check their calls against:
` + "`go test ./functions -run TestReferencePage -update`" + ` writes it, and the test
fails when the two disagree. How messages, polls and configs look is in
[clients.md](clients.md); streams in [streams.md](streams.md).

A handle is a string: "p" (producer), "c" (consumer, share consumer), "a"
(admin) or "s" (stream), and 32 hex digits. Every function raises
` + "`InvalidArgument`" + ` for a call that does not fit its form, naming
itself, the argument and the value (` + "`kafka-send: want 3 arguments, got 2; usage: ...`" + `);
the other exceptions each may raise are listed with it. A handle of the wrong
kind is ` + "`WrongKind`" + `, one unknown ` + "`UnknownHandle`" + `, a call after the Library closed
` + "`Closed`" + `.
`)
	family := ""
	for _, d := range docs {
		if d.Family != family {
			family = d.Family
			fmt.Fprintf(&b, "## %s%s\n\n", strings.ToUpper(family[:1]), family[1:])
		}
		fmt.Fprintf(&b, "### %s\n\n`%s`\n\n", d.Name, d.Usage)
		if len(d.Args) > 0 {
			b.WriteString("| argument | default | |\n|---|---|---|\n")
			for i, a := range d.Args {
				def := a.Default
				if def == "" && i >= d.Min {
					def = "none"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", a.Name, cell(def), cell(a.About))
			}
			b.WriteString("\n")
		}
		if len(d.Named) > 0 {
			b.WriteString("| named | default | |\n|---|---|---|\n")
			for _, a := range d.Named {
				def := a.Default
				if def == "" {
					def = "none"
				}
				fmt.Fprintf(&b, "| `\"%s\"` | %s | %s |\n", a.Name, cell(def), cell(a.About))
			}
			b.WriteString("\n")
		}
		if d.AnyNamed {
			b.WriteString("Other named arguments are config keys, as `kafka-create` takes them.\n\n")
		}
		if d.Returns != "" {
			fmt.Fprintf(&b, "Returns %s.\n\n", d.Returns)
		}
		if len(d.Errors) > 0 {
			fmt.Fprintf(&b, "Raises `%s`.\n\n", strings.Join(d.Errors, "`, `"))
		}
		if d.About != "" {
			fmt.Fprintf(&b, "%s\n\n", d.About)
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// cell is s in a Markdown table cell: its pipes escaped.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
