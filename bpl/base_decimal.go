package bpl

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/brain4it/kafkabpl/value"
)

// What string and number need of Java's DecimalFormat, and string's JSON.

// decimalPattern is a DecimalFormat pattern, as far as it is supported
// here: a prefix, an integer part of # and 0 with , grouping, an optional
// fraction of 0 then #, a suffix, and % in the prefix or suffix. Quotes,
// a ; negative pattern, exponents (E) and ‰ or ¤ are not supported.
type decimalPattern struct {
	prefix, suffix   string
	minInt, group    int // group 0: no grouping
	minFrac, maxFrac int
	percent          bool
}

func parseDecimalPattern(p string) (decimalPattern, error) {
	var d decimalPattern
	i := 0
	for i < len(p) && !strings.ContainsRune("#0,.", rune(p[i])) {
		i++
	}
	d.prefix = p[:i]
	j := i
	for j < len(p) && strings.ContainsRune("#0,.", rune(p[j])) {
		j++
	}
	d.suffix = p[j:]
	body := p[i:j]
	for _, affix := range []string{d.prefix, d.suffix} {
		if strings.ContainsAny(affix, "'；;‰¤#0,.") {
			return d, fmt.Errorf("pattern %s is not supported here (quotes, ;, exponents, ‰ and ¤ are not)", strconv.Quote(p))
		}
		if strings.Contains(affix, "%") {
			d.percent = true
		}
	}
	intPart, frac, hasFrac := strings.Cut(body, ".")
	if body == "" || strings.Contains(frac, ".") || strings.Contains(frac, ",") {
		return d, fmt.Errorf("pattern %s is no decimal pattern like \"#,##0.00\"", strconv.Quote(p))
	}
	if k := strings.LastIndexByte(intPart, ','); k >= 0 {
		d.group = len(intPart) - k - 1
		if d.group == 0 {
			return d, fmt.Errorf("pattern %s ends its integer part with a grouping separator", strconv.Quote(p))
		}
	}
	seenZero := false
	for _, c := range intPart {
		switch {
		case c == '0':
			d.minInt++
			seenZero = true
		case c == '#' && seenZero:
			return d, fmt.Errorf("pattern %s has # after 0 in its integer part", strconv.Quote(p))
		}
	}
	if hasFrac {
		seenHash := false
		for _, c := range frac {
			switch {
			case c == '0' && seenHash:
				return d, fmt.Errorf("pattern %s has 0 after # in its fraction", strconv.Quote(p))
			case c == '0':
				d.minFrac++
			default:
				seenHash = true
			}
			d.maxFrac++
		}
	}
	if d.minInt == 0 && d.minFrac == 0 {
		d.minInt = 1 // Java's "#.#" writes 0.5 as 0.5, its "#.00" as .50
	}
	return d, nil
}

// separators gives the decimal and grouping separators of a language, as
// Java's locales have them; "" is English.
func separators(lang string) (dec, group string, err error) {
	l := strings.ToLower(lang)
	if k := strings.IndexAny(l, "-_"); k >= 0 {
		l = l[:k]
	}
	switch l {
	case "", "en", "ja", "zh", "ko", "he", "th", "hi", "ms":
		return ".", ",", nil
	case "es", "ca", "gl", "eu", "de", "it", "pt", "nl", "da", "id", "tr", "el", "ro", "hr", "sl", "sr":
		return ",", ".", nil
	case "fr":
		return ",", "\u202f", nil
	case "ru", "pl", "cs", "sk", "sv", "fi", "nb", "no", "uk", "hu", "bg", "et", "lt", "lv":
		return ",", "\u00a0", nil
	}
	return "", "", fmt.Errorf("locale %s is not supported here", strconv.Quote(lang))
}

// decimalFormat writes x as DecimalFormat(pattern) with the symbols of
// lang does, rounding half to even on x's exact value, as Java does.
func decimalFormat(pattern, lang string, x float64) (string, error) {
	d, err := parseDecimalPattern(pattern)
	if err != nil {
		return "", err
	}
	dec, group, err := separators(lang)
	if err != nil {
		return "", err
	}
	neg := math.Signbit(x)
	if x != x {
		return "NaN", nil
	}
	x = math.Abs(x)
	if d.percent {
		x *= 100
	}
	var digits string
	if math.IsInf(x, 0) {
		digits = "∞"
	} else {
		intDigits, fracDigits := roundHalfEven(x, d.maxFrac)
		for len(fracDigits) > d.minFrac && strings.HasSuffix(fracDigits, "0") {
			fracDigits = fracDigits[:len(fracDigits)-1]
		}
		for len(intDigits) < d.minInt {
			intDigits = "0" + intDigits
		}
		if d.minInt == 0 && strings.TrimLeft(intDigits, "0") == "" {
			intDigits = strings.TrimLeft(intDigits, "0")
			if fracDigits == "" {
				intDigits = "0"
			}
		} else if len(intDigits) > d.minInt {
			intDigits = strings.TrimLeft(intDigits, "0")
			for len(intDigits) < d.minInt {
				intDigits = "0" + intDigits
			}
		}
		if d.group > 0 {
			var b strings.Builder
			for i, c := range intDigits {
				if i > 0 && (len(intDigits)-i)%d.group == 0 {
					b.WriteString(group)
				}
				b.WriteRune(c)
			}
			intDigits = b.String()
		}
		digits = intDigits
		if fracDigits != "" {
			digits += dec + fracDigits
		}
	}
	s := d.prefix + digits + d.suffix
	if neg {
		s = "-" + s
	}
	return s, nil
}

// roundHalfEven gives the digits of x >= 0 rounded to frac decimals, half
// to even, before and after the point.
func roundHalfEven(x float64, frac int) (string, string) {
	exact := new(big.Float).SetFloat64(x).Text('f', 1100) // every double's exact value
	ip, fp, _ := strings.Cut(exact, ".")
	keep, rest := fp[:frac], fp[frac:]
	up := false
	if rest != "" {
		switch {
		case rest[0] > '5':
			up = true
		case rest[0] == '5':
			if strings.TrimRight(rest[1:], "0") != "" {
				up = true
			} else {
				last := ip[len(ip)-1]
				if frac > 0 {
					last = keep[frac-1]
				}
				up = (last-'0')%2 == 1
			}
		}
	}
	n := []byte(ip + keep)
	if up {
		i := len(n) - 1
		for ; i >= 0 && n[i] == '9'; i-- {
			n[i] = '0'
		}
		if i < 0 {
			n = append([]byte{'1'}, n...)
		} else {
			n[i]++
		}
	}
	return string(n[:len(n)-frac]), string(n[len(n)-frac:])
}

// decimalParse reads the number at the start of s as DecimalFormat's parse
// does: the pattern's prefix, digits with lang's separators (grouping ones
// skipped), text after the number ignored. It gives an integer when the
// number is whole and fits, as Java's gives a Long, else a float.
func decimalParse(pattern, lang, s string) (any, error) {
	d, err := parseDecimalPattern(pattern)
	if err != nil {
		return nil, err
	}
	dec, group, err := separators(lang)
	if err != nil {
		return nil, err
	}
	rest, neg := s, false
	if strings.HasPrefix(rest, "-") {
		rest, neg = rest[1:], true
	}
	if !strings.HasPrefix(rest, d.prefix) {
		return nil, fmt.Errorf("%s does not start with the pattern's prefix %s", value.Describe(s), strconv.Quote(d.prefix))
	}
	rest = rest[len(d.prefix):]
	var num strings.Builder
	seenDec, digits := false, 0
	for rest != "" {
		c := rest[0]
		switch {
		case c >= '0' && c <= '9':
			num.WriteByte(c)
			digits++
			rest = rest[1:]
			continue
		case !seenDec && strings.HasPrefix(rest, dec):
			num.WriteByte('.')
			seenDec = true
			rest = rest[len(dec):]
			continue
		case !seenDec && d.group > 0 && digits > 0 && strings.HasPrefix(rest, group):
			rest = rest[len(group):]
			continue
		}
		break
	}
	if digits == 0 {
		return nil, fmt.Errorf("%s is not a number", value.Describe(s))
	}
	x, err := strconv.ParseFloat(num.String(), 64)
	if err != nil {
		return nil, fmt.Errorf("%s is not a number", value.Describe(s))
	}
	if d.percent && strings.HasPrefix(rest, strings.TrimSpace(d.suffix)) {
		x /= 100
	}
	if neg {
		x = -x
	}
	if x == math.Trunc(x) && math.Abs(x) < 1<<63 && !(x == 0 && neg) {
		return int64(x), nil
	}
	return x, nil
}

// jsonText writes a list in JSON, as string's "format" => "json" does.
func (t *task) jsonText(f *frame, l *value.List) (string, error) {
	var b strings.Builder
	if err := t.appendJSON(f, &b, l, map[*value.List]bool{}); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (t *task) appendJSON(f *frame, b *strings.Builder, v any, open map[*value.List]bool) error {
	if b.Len() > maxText {
		return t.errorf(f, "InvalidArgument", "string: the JSON text is too large (over %d bytes)", maxText)
	}
	switch v := v.(type) {
	case *value.List:
		if open[v] {
			return t.errorf(f, "InvalidArgument", "string: a list that contains itself cannot be written in JSON")
		}
		open[v] = true
		defer delete(open, v)
		object := v.Len() > 0
		for i := range v.Len() {
			object = object && v.Name(i) != ""
		}
		b.WriteByte("[{"[btoi(object)])
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if object {
				k, _ := json.Marshal(v.Name(i))
				b.Write(k)
				b.WriteByte(':')
			}
			if err := t.appendJSON(f, b, v.At(i), open); err != nil {
				return err
			}
		}
		b.WriteByte("]}"[btoi(object)])
	case string:
		s, _ := json.Marshal(v)
		b.Write(s)
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return t.errorf(f, "InvalidArgument", "string: %s cannot be written in JSON", toText(v))
		}
		b.WriteString(toText(v))
	default:
		b.WriteString("null")
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
