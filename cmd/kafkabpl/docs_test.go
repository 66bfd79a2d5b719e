package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/bpl"
	"github.com/brain4it/kafkabpl/embedded"
	"github.com/brain4it/kafkabpl/functions"
	"github.com/brain4it/kafkabpl/value"
)

// A documentation page's BPL snippets run as Go's Example functions do.
// A ```lisp block is BPL; the blocks of one page run in order, in one
// evaluator, against one embedded cluster with its schema registry, as
// kafkabpl run --embedded would run them one after the other
// (kafka-servers and schema-registry-url are set). A ```output block right
// after a lisp block is what the block prints: each top-level result
// that is not null, in BPL, a line each, and what print prints; an
// uncaught exception as "error: TYPE: message (FILE:LINE)". Handle ids
// print as "p<id>" and the like (see normalize), and "..." in an output
// line stands for any text. A lisp block with no output block must run
// without an exception.

// snippet is a lisp block of a page and the output block after it.
type snippet struct {
	line      int    // the block's first line in its page
	code      string // the BPL
	want      string // the output block; "" when there is none
	hasOutput bool
}

// docPages are the pages whose snippets run: the README and docs/.
func docPages(t *testing.T) []string {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) < 5 {
		t.Fatalf("docs/*.md: %v %v", pages, err)
	}
	return append([]string{"../../README.md"}, pages...)
}

var fence = regexp.MustCompile("^```([a-z]*)")

// snippets reads a page's lisp blocks and their output blocks.
func snippets(t *testing.T, page string) []snippet {
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []snippet
	sc := bufio.NewScanner(f)
	n, lang, start := 0, "", 0
	var body []string
	inBlock, lastClosed := false, ""
	for sc.Scan() {
		n++
		line := sc.Text()
		if !inBlock {
			m := fence.FindStringSubmatch(line)
			if m == nil {
				if strings.TrimSpace(line) != "" {
					lastClosed = ""
				}
				continue
			}
			inBlock, lang, start, body = true, m[1], n, nil
			continue
		}
		if line != "```" {
			body = append(body, line)
			continue
		}
		inBlock = false
		text := ""
		if len(body) > 0 {
			text = strings.Join(body, "\n") + "\n"
		}
		switch {
		case lang == "lisp" || lang == "bpl":
			out = append(out, snippet{line: start, code: text})
			lastClosed = "lisp"
			continue
		case lang == "output":
			if lastClosed != "lisp" {
				t.Errorf("%s:%d: an output block that does not follow a lisp block", page, start)
			} else {
				out[len(out)-1].want, out[len(out)-1].hasOutput = text, true
			}
		}
		lastClosed = ""
	}
	if inBlock {
		t.Errorf("%s:%d: a block that does not end", page, start)
	}
	return out
}

// TestDocSnippets runs every page's snippets and checks what each prints.
func TestDocSnippets(t *testing.T) {
	for _, page := range docPages(t) {
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			runPage(t, page, snippets(t, page))
		})
	}
}

// runPage runs a page's snippets in one session.
func runPage(t *testing.T, page string, snips []snippet) {
	if len(snips) == 0 {
		return
	}
	c, err := embedded.Start(embedded.Port(0), embedded.SchemaRegistry(0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lib := kafkabpl.New()
	var libLog syncBuffer
	lib.SetLogOutput(&libLog)
	var out syncBuffer
	in := bpl.New(&out)
	in.SetErrorOutput(&out)
	for name, f := range functions.Table(lib) {
		in.Define(name, f)
	}
	in.SetGlobal("kafka-servers", c.Servers())
	in.SetGlobal("schema-registry-url", c.RegistryURL())
	defer func() {
		in.Close()
		if err := lib.Close(context.Background()); err != nil {
			t.Errorf("%s: closing what the snippets left: %v", page, err)
		}
	}()
	for _, s := range snips {
		if semi := semicolonComment(s.code); semi != "" {
			t.Errorf("%s:%d: %q: BPL has no ; comments (it reads ; as a symbol); write (### \"...\")", page, s.line, semi)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		err := in.Run(ctx, strings.TrimPrefix(page, "../../"), s.code, func(v any) {
			if v != nil {
				fmt.Fprintln(&out, value.Format(v))
			}
		})
		cancel()
		var ex *bpl.Exception
		switch {
		case errors.As(err, &ex):
			fmt.Fprintf(&out, "error: %s\n", ex.Error())
		case err != nil:
			fmt.Fprintf(&out, "error: %v\n", err)
		}
		got := normalize(out.String())
		out.Reset()
		switch {
		case s.hasOutput && !outputMatches(got, s.want) && *update:
			rewriteOutput(t, page, s, got)
		case s.hasOutput && !outputMatches(got, s.want):
			t.Errorf("%s:%d prints:\n%s\nits output block says:\n%s", page, s.line, got, s.want)
		case !s.hasOutput && err != nil:
			t.Errorf("%s:%d: %v (a block with no output block must run without an exception)", page, s.line, err)
		}
	}
}

// rewriteOutput replaces s's output block in page with got (go test
// -run TestDocSnippets -update): for writing a page, whose output blocks
// are then read over, and their varying parts replaced with "...".
func rewriteOutput(t *testing.T, page string, s snippet, got string) {
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	block := "```lisp\n" + s.code + "```\n\n```output\n" + s.want + "```\n"
	if !strings.Contains(string(src), block) {
		t.Fatalf("%s:%d: cannot find the block to rewrite", page, s.line)
	}
	fixed := strings.Replace(string(src), block, "```lisp\n"+s.code+"```\n\n```output\n"+got+"```\n", 1)
	if err := os.WriteFile(page, []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
}

// outputMatches reports whether got is want, "..." in want standing for
// any text within a line.
func outputMatches(got, want string) bool {
	lines := strings.Split(strings.TrimRight(want, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.ReplaceAll(regexp.QuoteMeta(l), `\.\.\.`, `.*`)
	}
	return regexp.MustCompile(`^` + strings.Join(lines, "\n") + `\n$`).MatchString(got)
}

// semicolonComment returns the line of code from a ; that is not in a
// string, which BPL reads as a symbol (or fails to read): what a ;
// comment becomes; "" when there is none.
func semicolonComment(code string) string {
	inString, escaped := false, false
	for i, r := range code {
		switch {
		case escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case r == ';' && !inString:
			rest, _, _ := strings.Cut(code[i:], "\n")
			return rest
		}
	}
	return ""
}

// TestDocSnippetsChecker checks the checker: a ; comment is caught, and
// "..." stands for any text of a line only.
func TestDocSnippetsChecker(t *testing.T) {
	if got := semicolonComment(`(kafka-send p "t" "v") ; 1: delivered` + "\n(x)"); got != "; 1: delivered" {
		t.Errorf("semicolonComment found %q, want ; 1: delivered", got)
	}
	if got := semicolonComment(`(print "a ; b \" ; c") (### "c; d")`); got != "" {
		t.Errorf("semicolonComment found %q in strings", got)
	}
	for _, c := range []struct {
		got, want string
		ok        bool
	}{
		{"1\n\"p<id>\"\n", "1\n\"p<id>\"\n", true},
		{"(\"at\" => 1767225600123)\n", "(\"at\" => ...)\n", true},
		{"1\n2\n", "1\n", false},
		{"1\n2\n", "...\n", false},
		{"12\n", "1\n", false},
	} {
		if outputMatches(c.got, c.want) != c.ok {
			t.Errorf("outputMatches(%q, %q) = %v", c.got, c.want, !c.ok)
		}
	}
}

// Reset empties the buffer.
func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
