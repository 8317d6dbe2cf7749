package testsupport

import (
	"fmt"
	"time"

	"github.com/neemias/neemias-mcp/gen/capapi"
	"github.com/neemias/neemias-mcp/internal/capability"
)

// BusyDay is an output of checkins_by_date the size of the demo church's busiest Sunday: 212
// check-ins in 6 classes, half of them picked up, every label one that JSON must escape
// ("<", "&"). The encoder's and the summary's benchmarks and tests run on it.
func BusyDay() *capapi.CheckinsByDateOutput {
	o := &capapi.CheckinsByDateOutput{Date: capability.NewDate(2026, 7, 5), Total: 212}
	at := time.Date(2026, 7, 5, 9, 30, 0, 123456789, time.FixedZone("-03", -3*3600))
	for c, class := range []string{"Berçário", "Maternal", "Jardim", "Primários", "Juniores", "Pré-adolescentes"} {
		o.Classes = append(o.Classes, capapi.CheckinsByDateOutputClassesItem{ClassName: class})
		for i := c; i < 212; i += 6 {
			out := at.Add(time.Duration(i) * time.Minute)
			item := capapi.CheckinsByDateOutputClassesItemCheckinsItem{ChildHandle: fmt.Sprintf("H%05d", i),
				ChildLabel: "Maria Eduarda <Santos> & Oliveira", CheckedInAt: at}
			if i%2 == 0 {
				item.CheckedOutAt = &out
			}
			o.Classes[c].Checkins = append(o.Classes[c].Checkins, item)
		}
	}
	return o
}
