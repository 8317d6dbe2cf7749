package incident

import (
	"time"
	_ "time/tzdata" // the count is in Brasília time on machines without a tz database
)

// brasilia is the zone the ANPD's business days are counted in.
var brasilia = mustZone("America/Sao_Paulo")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		// time/tzdata is embedded: this cannot fail in a build of this package.
		panic("incident: time zone " + name + ": " + err.Error())
	}
	return loc
}

// NotificationDays is the notification period of Res. CD/ANPD nº 15/2024 art. 6: three business
// days from the controller's knowledge that the incident reached personal data.
const NotificationDays = 3

// Deadline is the end of the third business day after the day the incident became known, in
// Brasília time. Business days skip Saturdays, Sundays and the fixed national holidays; local
// holidays and Good Friday are not skipped, so the date is never later than the legal one
// (at worst a day early), which is the side to err on.
func Deadline(detected time.Time) time.Time {
	d := detected.In(brasilia)
	day := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, brasilia)
	for n := 0; n < NotificationDays; {
		day = day.AddDate(0, 0, 1)
		if businessDay(day) {
			n++
		}
	}
	return day.AddDate(0, 0, 1).Add(-time.Second)
}

func businessDay(d time.Time) bool {
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !nationalHoliday(d)
}

// nationalHoliday: the fixed national holidays (Leis 662/1949, 6.802/1980, 14.759/2023).
func nationalHoliday(d time.Time) bool {
	switch m, day := d.Month(), d.Day(); {
	case m == time.January && day == 1,
		m == time.April && day == 21,
		m == time.May && day == 1,
		m == time.September && day == 7,
		m == time.October && day == 12,
		m == time.November && (day == 2 || day == 15 || (day == 20 && d.Year() >= 2024)),
		m == time.December && day == 25:
		return true
	}
	return false
}
