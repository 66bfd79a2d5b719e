package kafkabpl_test

import (
	"testing"

	"github.com/brain4it/kafkabpl/internal/grouptest"
	"github.com/brain4it/kafkabpl/internal/testkit"
)

// TestCommitWhileRevoked runs grouptest.CommitWhileRevoked on the embedded
// cluster: a commit in flight as the group revokes a partition succeeds,
// reports nothing lost, and nothing is delivered again (issue 47). It runs
// on Kafka 4.4 in cmd/kafkabpl's TestRealKafka.
func TestCommitWhileRevoked(t *testing.T) {
	t.Parallel()
	c := testkit.NewCluster(t)
	grouptest.CommitWhileRevoked(t, c.Servers(), "revoked-jobs", "revoked")
}
