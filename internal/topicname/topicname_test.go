package topicname

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"a", "sensor.readings", "A_b-9", strings.Repeat("x", MaxLen), "..."} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q) = %v, want nil", ok, err)
		}
	}
	for name, want := range map[string]string{
		"":                            "want 1 to 249 characters",
		".":                           `not "." or ".."`,
		"..":                          `not "." or ".."`,
		strings.Repeat("x", MaxLen+1): "want 1 to 249 characters",
		"a b":                         "only letters, digits",
		"é":                           "only letters, digits",
		"a/b":                         "only letters, digits",
	} {
		err := Check(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%.20q) = %v, want an error containing %q", name, err, want)
		}
	}
}
