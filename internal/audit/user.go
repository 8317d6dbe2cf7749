package audit

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/neemias/neemias-mcp/gen/db"
)

// InsertUserAction appends e, an action of the user of church that happened outside any
// request of theirs (no caller context: the set-password page, where the person proves who
// they are with a one-time code and not a login), within the maintenance transaction of q
// (store.InSystemTx, run as the schema owner). Unlike [InsertOperator] the entry names the
// user; e.ClientID says through what it happened.
func InsertUserAction(ctx context.Context, q *db.Queries, church, user uuid.UUID, e Entry) error {
	if church == uuid.Nil || user == uuid.Nil {
		return fmt.Errorf("audit: a user action needs its church and user")
	}
	return InsertFor(ctx, q, church, user, e)
}
