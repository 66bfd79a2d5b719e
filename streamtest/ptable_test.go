//go:build synctests

package streamtest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brain4it/kafkabpl"
	"github.com/brain4it/kafkabpl/stream"
	"github.com/brain4it/kafkabpl/streamtest"
)

// TestPartitionedTableHold checks, in virtual time, how long a
// partitioned table's row that is later than the inputs waits for them
// (StreamTable.Hold, a minute here): inputs an hour old do not see a row
// written now until it has waited its minute, then do; an input after
// the row sees it at once.
func TestPartitionedTableHold(t *testing.T) {
	streamtest.Run(t, func(d *streamtest.Driver) {
		d.Send("prices", kafkabpl.Message{Key: "k", Value: "p1"})
		id := d.Stream(map[string]any{"group": "hold"}, stream.Spec{
			From: []string{"orders"}, To: "priced",
			Tables: []stream.Table{{Topic: "prices", Partitioned: true, Hold: time.Minute}},
			Join:   &stream.Join{Table: "prices", Kind: stream.LeftJoin},
			Transform: func(_ context.Context, in *kafkabpl.Record) ([]stream.Output, error) {
				v, _ := in.Joined()
				return []stream.Output{{Message: kafkabpl.Message{Key: in.Key(), Value: fmt.Sprintf("%v@%v", in.Value(), v)}}}, nil
			},
		})
		old := func(v string) kafkabpl.Message {
			return kafkabpl.Message{Key: "k", Value: v, Timestamp: time.Now().Add(-time.Hour)}
		}
		d.Send("orders", old("a"))
		d.Advance(30 * time.Second)
		d.Send("orders", old("b"))
		d.Advance(10 * time.Second)
		if st := d.Status(id); st.Processed != 2 || st.Tables[0].Pending != 1 || st.Tables[0].Keys != 0 {
			t.Errorf("status %+v, table %+v: want 2 processed, the row pending", st, st.Tables[0])
		}
		d.Advance(time.Minute)
		d.Send("orders", old("c"), kafkabpl.Message{Key: "k", Value: "d"})
		d.Advance(time.Second)
		if got, want := streamtest.Values(d.Read("priced")), []string{"a@<nil>", "b@<nil>", "c@p1", "d@p1"}; !slices.Equal(got, want) {
			t.Errorf("outputs %v, want %v", got, want)
		}
	})
}
