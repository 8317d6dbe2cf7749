package store

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// registerUUID makes pgx encode and scan github.com/google/uuid values (the type sqlc
// generates for uuid columns) in binary form directly. pgx-google-uuid covers encoding, but
// pgx plans a scan into any sql.Scanner (uuid.UUID is one) before it tries the library's
// wrapper, so every scanned id went bytes → canonical string → uuid.Parse; the scan plan
// below copies the 16 bytes instead.
func registerUUID(tm *pgtype.Map) {
	pgxuuid.Register(tm)
	tm.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanBinaryUUID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type scanBinaryUUID struct{}

func (scanBinaryUUID) Scan(src []byte, dst any) error {
	d := dst.(*uuid.UUID)
	if src == nil {
		return fmt.Errorf("cannot scan NULL into *uuid.UUID")
	}
	if len(src) != 16 {
		return fmt.Errorf("invalid length for uuid: %d", len(src))
	}
	copy(d[:], src)
	return nil
}
