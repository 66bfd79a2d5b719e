package bpl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones by name even where the system has no zoneinfo
	"unicode/utf8"

	"github.com/brain4it/kafkabpl/value"
)

// The time family: dates as milliseconds since 1970-01-01T00:00:00Z, and
// their text.
//
// Patterns are Java's SimpleDateFormat patterns. Letters stand for fields:
//
//	G era (AD, BC)           y year (yy: two digits)   M L month (MM 01, MMM Jan, MMMM January)
//	d day of month           D day of year             E day name (EEE Mon, EEEE Monday)
//	u day number (1 Monday)  a AM or PM                H hour 0-23   k hour 1-24
//	K hour 0-11              h hour 1-12               m minute      s second
//	S millisecond (SSS 007)  z zone abbreviation (CET) Z zone offset (+0100)
//	X ISO 8601 zone (X +01, XX +0100, XXX +01:00; Z for UTC)
//
// A letter repeated pads a number with zeros to that many digits. Text
// between single quotes is literal ('' is a quote), as is any other
// character. The week fields Y w W F and full zone names (zzzz) are not
// supported, and other letters are not fields: a pattern with either is an
// InvalidArgument exception. Names are English; a language argument other
// than English ("en", "en_US", ...) is an InvalidArgument exception when
// the pattern has names. Without a pattern (or with null) the pattern is
// "MMM d, yyyy h:mm:ss a" (Oct 29, 2017 9:46:29 AM), as Java's en_US
// default.
//
// Dates are read and written in the time zone of the named argument
// "time-zone" => name: an IANA name ("Europe/Madrid", "UTC") or an offset
// ("GMT+01:00", "UTC-5"); by default the local zone of the process, as
// Java's default zone (UTC where the process has none).

func init() {
	register(map[string]builtin{
		"date":        biDate,
		"parse-date":  biParseDate,
		"format-date": biFormatDate,
	})
}

// defaultDatePattern is Java's en_US default date-time format.
const defaultDatePattern = "MMM d, yyyy h:mm:ss a"

// timeArgs checks call's arity and evaluates its arguments: the unnamed
// ones, and the zone of "time-zone" => name (the local zone without it).
func (t *task) timeArgs(f *frame, call *value.List, min, max int) ([]any, *time.Location, error) {
	args, err := t.evalArgs(f, call, 1)
	if err != nil {
		return nil, nil, err
	}
	loc := time.Local
	var pos []any
	for name, v := range args.All() {
		switch name {
		case "":
			pos = append(pos, v)
		case "time-zone":
			s, ok := v.(string)
			if !ok {
				return nil, nil, t.errorf(f, "InvalidArgument", "%s: time-zone is %s, want a zone name", fname(call), value.Describe(v))
			}
			if loc, err = zoneByName(s); err != nil {
				return nil, nil, t.errorf(f, "InvalidArgument", "%s: %v", fname(call), err)
			}
		default:
			return nil, nil, t.errorf(f, "InvalidArgument", "%s: unknown argument %s", fname(call), strconv.Quote(name))
		}
	}
	if len(pos) < min || len(pos) > max {
		return nil, nil, t.errorf(f, "InvalidArgument", "%s: want %d to %s, got %d", fname(call), min, plural(max, "argument"), len(pos))
	}
	return pos, loc, nil
}

// zoneByName gives the zone an IANA name or a GMT/UTC offset names.
func zoneByName(name string) (*time.Location, error) {
	if loc, n := offsetZone(name); loc != nil && n == len(name) {
		return loc, nil
	}
	if name == "" || name == "Local" {
		return nil, fmt.Errorf("unknown time zone %s", strconv.Quote(name))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %s", strconv.Quote(value.Short(name)))
	}
	return loc, nil
}

// offsetZone reads a zone at the start of s written GMT, UTC or UT, with
// an optional offset (+1, -05, +0530, +05:30): the zone and the bytes it
// took, or nil.
func offsetZone(s string) (*time.Location, int) {
	n := 0
	for _, p := range []string{"GMT", "UTC", "UT"} {
		if strings.HasPrefix(s, p) {
			n = len(p)
			break
		}
	}
	if n == 0 {
		return nil, 0
	}
	if off, m, ok := readOffset(s[n:], true); ok {
		return time.FixedZone(s[:n+m], off), n + m
	}
	return time.UTC, n
}

// readOffset reads +hh, +hhmm or +hh:mm (or - ...) at the start of s: the
// offset in seconds and the bytes it took. With short, +h is an offset
// too.
func readOffset(s string, short bool) (int, int, bool) {
	if len(s) < 2 || s[0] != '+' && s[0] != '-' {
		return 0, 0, false
	}
	digits := func(s string, max int) int {
		n := 0
		for n < len(s) && n < max && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return n
	}
	hn := digits(s[1:], 2)
	if hn == 0 || hn == 1 && !short {
		return 0, 0, false
	}
	h, _ := strconv.Atoi(s[1 : 1+hn])
	n, m := 1+hn, 0
	if hn == 2 {
		rest := s[n:]
		colon := strings.HasPrefix(rest, ":")
		if colon {
			rest = rest[1:]
		}
		if digits(rest, 2) == 2 {
			m, _ = strconv.Atoi(rest[:2])
			n += 2
			if colon {
				n++
			}
		}
	}
	if h > 23 || m > 59 {
		return 0, 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, n, true
}

// millisArg reads a date in milliseconds: a number (a float truncated).
func (t *task) millisArg(f *frame, call *value.List, v any, i int) (int64, error) {
	if _, ok := toFloat(v); !ok {
		return 0, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a date in milliseconds", fname(call), i+1, value.Describe(v))
	}
	return javaLong(v), nil
}

// (date) gives the current time in milliseconds since 1970-01-01 UTC, as
// does (date "now"). (date "add" ms field n) gives the date ms with n
// added to field, and (date "set" ms field n) the date ms with field set
// to n, in the time zone of "time-zone" => name (by default the local
// one). The fields are "year", "month" (from 0, January, as in Java),
// "day_of_month", "day_of_year", "day_of_week" (1 Sunday to 7 Saturday,
// within the week from Sunday), "week_of_month", "week_of_year" (weeks from
// Sunday, the first one holding the 1st of the month or year),
// "hour_of_day", "hour" (of the half day), "minute", "second" and
// "millisecond". Adding months or years keeps the day within the month
// (January 31 plus a month is the last of February); adding days or weeks
// keeps the time of day; adding hours and smaller units adds elapsed time.
// Setting a field past its range carries over to the next larger one
// (day_of_month 32 of January is February 1).
func biDate(t *task, f *frame, call *value.List) (any, error) {
	args, loc, err := t.timeArgs(f, call, 0, 4)
	if err != nil {
		return nil, err
	}
	var cmd any
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case nil, "now":
		if len(args) > 1 {
			return nil, t.errorf(f, "InvalidArgument", "date: want no arguments after %s, got %d", value.Describe(cmd), len(args)-1)
		}
		return time.Now().UnixMilli(), nil
	case "add", "set":
	default:
		return nil, t.errorf(f, "InvalidArgument", `date: want "now", "add" or "set", got %s`, value.Describe(cmd))
	}
	if len(args) != 4 {
		return nil, t.errorf(f, "InvalidArgument", "date: %s wants a date, a field and a value, got %d arguments", cmd, len(args)-1)
	}
	ms, err := t.millisArg(f, call, args[1], 1)
	if err != nil {
		return nil, err
	}
	field, ok := args[2].(string)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "date: argument 3 is %s, want a field name", value.Describe(args[2]))
	}
	if _, ok := toFloat(args[3]); !ok {
		return nil, t.errorf(f, "InvalidArgument", "date: argument 4 is %s, want a number", value.Describe(args[3]))
	}
	n := javaLong(args[3])
	if n < -1<<31 || n >= 1<<31 {
		return nil, t.errorf(f, "InvalidArgument", "date: value %d out of range", n)
	}
	d := time.UnixMilli(ms).In(loc)
	var r time.Time
	if cmd == "add" {
		r, ok = dateAdd(d, field, int(n))
	} else {
		r, ok = dateSet(d, field, int(n))
	}
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "date: unknown field %s", value.Describe(field))
	}
	return r.UnixMilli(), nil
}

// dateAdd adds n to a field of d; ok is false for an unknown field.
func dateAdd(d time.Time, field string, n int) (time.Time, bool) {
	unit := map[string]int64{"hour_of_day": 3600000, "hour": 3600000, "minute": 60000, "second": 1000, "millisecond": 1}
	switch field {
	case "year":
		return addMonths(d, 12*n), true
	case "month":
		return addMonths(d, n), true
	case "day_of_month", "day_of_week", "day_of_year":
		return d.AddDate(0, 0, n), true
	case "week_of_month", "week_of_year":
		return d.AddDate(0, 0, 7*n), true
	}
	if u, ok := unit[field]; ok {
		return time.UnixMilli(d.UnixMilli() + int64(n)*u).In(d.Location()), true
	}
	return d, false
}

// addMonths adds n months to d, keeping the day within the month.
func addMonths(d time.Time, n int) time.Time {
	y, m, day := d.Date()
	total := int(m) - 1 + n
	y += total / 12
	if total %= 12; total < 0 {
		total += 12
		y--
	}
	month := time.Month(total + 1)
	if last := time.Date(y, month+1, 0, 0, 0, 0, 0, time.UTC).Day(); day > last {
		day = last
	}
	hh, mm, ss := d.Clock()
	return time.Date(y, month, day, hh, mm, ss, d.Nanosecond(), d.Location())
}

// dateSet sets a field of d to n; ok is false for an unknown field.
func dateSet(d time.Time, field string, n int) (time.Time, bool) {
	y, m, day := d.Date()
	hh, mm, ss := d.Clock()
	ns := d.Nanosecond()
	loc := d.Location()
	switch field {
	case "year":
		y = n
	case "month":
		m = time.Month(n + 1)
	case "day_of_month":
		day = n
	case "day_of_year":
		m, day = time.January, n
	case "day_of_week":
		day += n - 1 - int(d.Weekday())
	case "week_of_month":
		first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Weekday()
		day += 7 * (n - ((day-1+int(first))/7 + 1))
	case "week_of_year":
		first := time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC).Weekday()
		day += 7 * (n - ((d.YearDay()-1+int(first))/7 + 1))
	case "hour_of_day":
		hh = n
	case "hour":
		hh = hh/12*12 + n
	case "minute":
		mm = n
	case "second":
		ss = n
	case "millisecond":
		ns = n * 1000000
	default:
		return d, false
	}
	return time.Date(y, m, day, hh, mm, ss, ns, loc), true
}

// dateToken is a piece of a pattern: a field (letter repeated count
// times) or literal text (letter 0).
type dateToken struct {
	letter byte
	count  int
	text   string
}

// numeric reports whether a field is written as a number.
func (tk dateToken) numeric() bool {
	switch tk.letter {
	case 'y', 'd', 'D', 'u', 'H', 'k', 'K', 'h', 'm', 's', 'S':
		return true
	case 'M', 'L':
		return tk.count < 3
	}
	return false
}

// named reports whether a field is written as an English name.
func (tk dateToken) named() bool {
	switch tk.letter {
	case 'G', 'E', 'a':
		return true
	case 'M', 'L':
		return tk.count >= 3
	}
	return false
}

// parsePattern splits a SimpleDateFormat pattern into tokens; lang must
// be English if the pattern has names.
func parsePattern(pattern, lang string) ([]dateToken, error) {
	var toks []dateToken
	lit := func(s string) {
		if n := len(toks); n > 0 && toks[n-1].letter == 0 {
			toks[n-1].text += s
		} else {
			toks = append(toks, dateToken{text: s})
		}
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(pattern) {
					return nil, fmt.Errorf("the pattern %s has an unterminated quote", strconv.Quote(value.Short(pattern)))
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(pattern[j])
			}
			lit(b.String())
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(pattern) && pattern[j] == c {
				j++
			}
			tk := dateToken{letter: c, count: j - i}
			switch {
			case strings.IndexByte("GyMLdDEuaHkKhmsSZ", c) >= 0, c == 'z' && tk.count < 4, c == 'X' && tk.count <= 3:
			case strings.IndexByte("YwWFz", c) >= 0:
				return nil, fmt.Errorf("the pattern letter %s is not supported", strconv.Quote(pattern[i:j]))
			default:
				return nil, fmt.Errorf("%s is not a pattern letter (quote text: 'text')", strconv.Quote(pattern[i:j]))
			}
			if tk.named() && lang != "" && !strings.HasPrefix(strings.ToLower(lang), "en") {
				return nil, fmt.Errorf("names are in English only, not in %s", strconv.Quote(value.Short(lang)))
			}
			toks = append(toks, tk)
			i = j
		default:
			lit(string(c))
			i++
		}
	}
	return toks, nil
}

// pad writes n with at least count digits.
func pad(n, count int) string {
	s := strconv.Itoa(n)
	if len(s) < count {
		s = strings.Repeat("0", count-len(s)) + s
	}
	return s
}

// formatDate writes d as toks say.
func formatDate(d time.Time, toks []dateToken) string {
	var b strings.Builder
	for _, tk := range toks {
		n := tk.count
		switch tk.letter {
		case 0:
			b.WriteString(tk.text)
		case 'G':
			if d.Year() > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y':
			y := d.Year()
			if y <= 0 {
				y = 1 - y // the year of the era, as Java writes it
			}
			if n == 2 {
				b.WriteString(pad(y%100, 2))
			} else {
				b.WriteString(pad(y, n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(d.Month().String())
			case n == 3:
				b.WriteString(d.Month().String()[:3])
			default:
				b.WriteString(pad(int(d.Month()), n))
			}
		case 'd':
			b.WriteString(pad(d.Day(), n))
		case 'D':
			b.WriteString(pad(d.YearDay(), n))
		case 'E':
			if n >= 4 {
				b.WriteString(d.Weekday().String())
			} else {
				b.WriteString(d.Weekday().String()[:3])
			}
		case 'u':
			b.WriteString(pad((int(d.Weekday())+6)%7+1, n))
		case 'a':
			if d.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad(d.Hour(), n))
		case 'k':
			b.WriteString(pad((d.Hour()+23)%24+1, n))
		case 'K':
			b.WriteString(pad(d.Hour()%12, n))
		case 'h':
			b.WriteString(pad((d.Hour()+11)%12+1, n))
		case 'm':
			b.WriteString(pad(d.Minute(), n))
		case 's':
			b.WriteString(pad(d.Second(), n))
		case 'S':
			b.WriteString(pad(d.Nanosecond()/1000000, n))
		case 'z':
			b.WriteString(d.Format("MST"))
		case 'Z':
			b.WriteString(d.Format("-0700"))
		case 'X':
			b.WriteString(d.Format([]string{"Z07", "Z0700", "Z07:00"}[n-1]))
		}
	}
	return b.String()
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// matchName reads at the start of s one of names, whole or by its first
// three letters, in any case: its index and the bytes it took.
func matchName(s string, names []string) (int, int, bool) {
	for i, name := range names {
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return i, len(name), true
		}
	}
	for i, name := range names {
		if len(s) >= 3 && strings.EqualFold(s[:3], name[:3]) {
			return i, 3, true
		}
	}
	return 0, 0, false
}

// parseDate reads s as toks say, in loc unless s names a zone. Fields
// left out are those of 1970-01-01 00:00:00.000; values out of range carry
// over (January 32 is February 1), and text after the pattern is ignored,
// as Java's parse does.
func parseDate(s string, toks []dateToken, loc *time.Location) (time.Time, error) {
	year, month, day, yday, hour, minute, sec, ms := 1970, 1, 1, 0, 0, 0, 0, 0
	pm, bc := -1, false
	pos := 0
	fail := func(what string) error {
		return fmt.Errorf("cannot read %s as a date: %s at character %d", strconv.Quote(value.Short(s)), what, utf8.RuneCountInString(s[:pos]))
	}
	for i, tk := range toks {
		rest := s[pos:]
		if tk.letter == 0 {
			if !strings.HasPrefix(rest, tk.text) {
				return time.Time{}, fail("want " + strconv.Quote(tk.text))
			}
			pos += len(tk.text)
			continue
		}
		if tk.numeric() {
			width := 18
			if i+1 < len(toks) && toks[i+1].numeric() {
				width = tk.count // abutting numbers: each takes its width
			}
			n := 0
			for n < len(rest) && n < width && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n == 0 || width < 18 && n < width {
				return time.Time{}, fail("want a number")
			}
			v, _ := strconv.Atoi(rest[:n])
			pos += n
			switch tk.letter {
			case 'y':
				year = v
				if tk.count <= 2 && n == 2 {
					start := time.Now().Year() - 80 // Java's two-digit year window
					year = start/100*100 + v
					if year < start {
						year += 100
					}
				}
			case 'M', 'L':
				month = v
			case 'd':
				day = v
			case 'D':
				yday = v
			case 'H':
				hour = v
			case 'k':
				hour = v % 24
			case 'K', 'h':
				hour = v % 12
			case 'm':
				minute = v
			case 's':
				sec = v
			case 'S':
				ms = v
			}
			continue
		}
		switch tk.letter {
		case 'G':
			switch {
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "AD"):
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "BC"):
				bc = true
			default:
				return time.Time{}, fail("want AD or BC")
			}
			pos += 2
		case 'M', 'L':
			m, n, ok := matchName(rest, monthNames[:])
			if !ok {
				return time.Time{}, fail("want a month name")
			}
			month = m + 1
			pos += n
		case 'E':
			_, n, ok := matchName(rest, dayNames[:])
			if !ok {
				return time.Time{}, fail("want a day name")
			}
			pos += n
		case 'a':
			switch {
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "AM"):
				pm = 0
			case len(rest) >= 2 && strings.EqualFold(rest[:2], "PM"):
				pm = 1
			default:
				return time.Time{}, fail("want AM or PM")
			}
			pos += 2
		case 'z', 'Z', 'X':
			z, n, err := readZone(rest, tk.letter, loc)
			if err != nil {
				return time.Time{}, fail(err.Error())
			}
			loc = z
			pos += n
		}
	}
	if pm == 1 {
		hour = hour%12 + 12 // h 12 with PM is noon
	}
	if bc {
		year = 1 - year
	}
	if yday > 0 {
		month, day = 1, yday
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, ms*1000000, loc), nil
}

// readZone reads a zone at the start of s as field letter has it: an
// offset (+01, +0100, +01:00; Z for UTC with X), GMT or UTC with an
// offset, or (for z) an IANA name or the abbreviation of loc.
func readZone(s string, letter byte, loc *time.Location) (*time.Location, int, error) {
	if off, n, ok := readOffset(s, false); ok {
		return time.FixedZone("", off), n, nil
	}
	if letter == 'X' && strings.HasPrefix(s, "Z") {
		return time.UTC, 1, nil
	}
	if z, n := offsetZone(s); z != nil {
		return z, n, nil
	}
	if letter == 'z' {
		n := 0
		for n < len(s) && (s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z' || s[n] == '/' || s[n] == '_') {
			n++
		}
		name := s[:n]
		for _, month := range []time.Month{time.January, time.July} {
			if abbr, _ := time.Date(2000, month, 1, 0, 0, 0, 0, loc).Zone(); n > 0 && abbr == name {
				return loc, n, nil
			}
		}
		if n > 0 {
			if z, err := time.LoadLocation(name); err == nil && name != "Local" {
				return z, n, nil
			}
		}
	}
	return nil, 0, errors.New("want a time zone")
}

// datePattern reads the optional pattern and language of parse-date and
// format-date, from args[1] on.
func (t *task) datePattern(f *frame, call *value.List, args []any) ([]dateToken, error) {
	pattern, lang := defaultDatePattern, ""
	for i, p := range []*string{&pattern, &lang} {
		if len(args) <= i+1 || args[i+1] == nil {
			continue
		}
		s, ok := args[i+1].(string)
		if !ok {
			return nil, t.errorf(f, "InvalidArgument", "%s: argument %d is %s, want a string", fname(call), i+2, value.Describe(args[i+1]))
		}
		*p = s
	}
	toks, err := parsePattern(pattern, lang)
	if err != nil {
		return nil, t.errorf(f, "InvalidArgument", "%s: %v", fname(call), err)
	}
	return toks, nil
}

// (format-date ms pattern language) writes the date ms (milliseconds since
// 1970-01-01 UTC) as the SimpleDateFormat pattern says, in the zone of
// "time-zone" => name (by default the local one): (format-date 0
// "yyyy/MM/dd HH:mm" "time-zone" => "UTC") is "1970/01/01 00:00". pattern
// and language are optional (see the family's comment above).
func biFormatDate(t *task, f *frame, call *value.List) (any, error) {
	args, loc, err := t.timeArgs(f, call, 1, 3)
	if err != nil {
		return nil, err
	}
	ms, err := t.millisArg(f, call, args[0], 0)
	if err != nil {
		return nil, err
	}
	toks, err := t.datePattern(f, call, args)
	if err != nil {
		return nil, err
	}
	return formatDate(time.UnixMilli(ms).In(loc), toks), nil
}

// (parse-date s pattern language) reads the text s as the SimpleDateFormat
// pattern says and gives the date in milliseconds since 1970-01-01 UTC:
// (parse-date "25/02/1973" "dd/MM/yyyy" "time-zone" => "UTC") is
// 99446400000. The date is in the zone s names, else in the zone of
// "time-zone" => name (by default the local one). Fields left out are
// those of 1970-01-01 00:00:00.000; values out of range carry over
// ("32/01/2020" is February 1); text after the pattern is ignored; two-digit
// years (yy) fall within 80 years before and 20 after now. Text that does
// not fit the pattern is an InvalidArgument exception.
func biParseDate(t *task, f *frame, call *value.List) (any, error) {
	args, loc, err := t.timeArgs(f, call, 1, 3)
	if err != nil {
		return nil, err
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, t.errorf(f, "InvalidArgument", "parse-date: argument 1 is %s, want a string", value.Describe(args[0]))
	}
	toks, err := t.datePattern(f, call, args)
	if err != nil {
		return nil, err
	}
	d, err := parseDate(s, toks, loc)
	if err != nil {
		return nil, t.errorf(f, "InvalidArgument", "parse-date: %v", err)
	}
	return d.UnixMilli(), nil
}
