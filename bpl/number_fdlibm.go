package bpl

import (
	"math"
	"math/big"
	"sync"
)

// Java's StrictMath computes acos, asin, sin, cos, tan, log and log10 with
// fdlibm 5.3 (Sun's freely distributable libm), and brain4it's results
// (its docs and its test suite print them with all 17 digits) are that
// library's, which differ from Go's math package in the last bit for
// about one argument in ten: (acos 0.5) is 1.0471975511965979 in Java and
// 1.0471975511965976 with math.Acos. The functions here follow fdlibm's
// published method step by step (the same polynomial coefficients, the
// same splitting of a double into a high and a low word, the same order of
// operations), so they give its results bit for bit, but for sin, cos
// and tan beyond 2**19 pi/2, whose argument is reduced exactly here and
// by a longer method there (within 2 units in the last place). Java's
// Math may use a processor's own routine instead for sin, cos, tan, log
// and log10; it agrees with StrictMath for the arguments brain4it's docs
// show.
//
// Hazard: bit-for-bit agreement needs every operation rounded separately.
// The Go compiler fuses x*y+z into one instruction on some processors
// (arm64, ppc64le, s390x) unless a product is converted explicitly, so the
// products below that feed a sum are written float64(a*b).

// hi gives the high 32 bits of x's representation.
func hi(x float64) int32 { return int32(math.Float64bits(x) >> 32) }

// lo gives the low 32 bits of x's representation.
func lo(x float64) uint32 { return uint32(math.Float64bits(x)) }

// withHi gives x with its high word replaced by h.
func withHi(x float64, h int32) float64 {
	return math.Float64frombits(uint64(uint32(h))<<32 | uint64(lo(x)))
}

// zeroLo gives x with its low word cleared.
func zeroLo(x float64) float64 {
	return math.Float64frombits(math.Float64bits(x) &^ 0xffffffff)
}

// The rational approximation of asin on [0, 0.5] that acos and asin
// share: asin(x) = x + x*x*x*p(x*x)/q(x*x).
const (
	asinP0 = 1.66666666666666657415e-01
	asinP1 = -3.25565818622400915405e-01
	asinP2 = 2.01212532134862925881e-01
	asinP3 = -4.00555345006794114027e-02
	asinP4 = 7.91534994289814532176e-04
	asinP5 = 3.47933107596021167570e-05
	asinQ1 = -2.40339491173441421878e+00
	asinQ2 = 2.02094576023350569471e+00
	asinQ3 = -6.88283971605453293030e-01
	asinQ4 = 7.70381505559019352791e-02

	fdPi     = 3.14159265358979311600e+00
	fdPio2Hi = 1.57079632679489655800e+00
	fdPio2Lo = 6.12323399573676603587e-17
	fdPio4Hi = 7.85398163397448278999e-01
)

// asinRatio gives p(z)/q(z) of the asin approximation.
func asinRatio(z float64) float64 {
	p := z * (asinP0 + z*(asinP1+z*(asinP2+z*(asinP3+z*(asinP4+z*asinP5)))))
	q := 1 + z*(asinQ1+z*(asinQ2+z*(asinQ3+z*asinQ4)))
	return p / q
}

// javaAcos is Java's StrictMath.acos.
func javaAcos(x float64) float64 {
	hx := hi(x)
	ix := hx & 0x7fffffff
	switch {
	case ix >= 0x3ff00000: // |x| >= 1
		if uint32(ix-0x3ff00000)|lo(x) == 0 {
			if hx > 0 {
				return 0
			}
			return fdPi + 2*fdPio2Lo
		}
		return math.NaN()
	case ix < 0x3fe00000: // |x| < 0.5
		if ix <= 0x3c600000 {
			return fdPio2Hi + fdPio2Lo
		}
		r := asinRatio(x * x)
		return fdPio2Hi - (x - (fdPio2Lo - float64(x*r)))
	case hx < 0: // -1 < x <= -0.5
		z := (1 + x) * 0.5
		s := math.Sqrt(z)
		w := float64(asinRatio(z)*s) - fdPio2Lo
		return fdPi - 2*(s+w)
	default: // 0.5 <= x < 1
		z := (1 - x) * 0.5
		s := math.Sqrt(z)
		df := zeroLo(s)
		c := (z - float64(df*df)) / (s + df)
		w := float64(asinRatio(z)*s) + c
		return 2 * (df + w)
	}
}

// javaAsin is Java's StrictMath.asin.
func javaAsin(x float64) float64 {
	hx := hi(x)
	ix := hx & 0x7fffffff
	switch {
	case ix >= 0x3ff00000: // |x| >= 1
		if uint32(ix-0x3ff00000)|lo(x) == 0 {
			return float64(x*fdPio2Hi) + float64(x*fdPio2Lo)
		}
		return math.NaN()
	case ix < 0x3fe00000: // |x| < 0.5
		if ix < 0x3e400000 { // |x| < 2**-27: x itself
			return x
		}
		return x + float64(x*asinRatio(x*x))
	}
	t := (1 - math.Abs(x)) * 0.5
	s := math.Sqrt(t)
	var r float64
	if ix >= 0x3fef3333 { // |x| > 0.975
		r = fdPio2Hi - (2*(s+float64(s*asinRatio(t))) - fdPio2Lo)
	} else {
		w := zeroLo(s)
		c := (t - float64(w*w)) / (s + w)
		p := float64(2*s*asinRatio(t)) - (fdPio2Lo - 2*c)
		q := fdPio4Hi - 2*w
		r = fdPio4Hi - (p - q)
	}
	if hx > 0 {
		return r
	}
	return -r
}

// The parts of pi/2 that remPio2 subtracts, each exact in 33 bits so that
// n times one of them is exact for the n it is used with.
const (
	invPio2 = 6.36619772367581382433e-01
	pio2p1  = 1.57079632673412561417e+00
	pio2p1t = 6.07710050650619224932e-11
	pio2p2  = 6.07710050630396597660e-11
	pio2p2t = 2.02226624879595063154e-21
	pio2p3  = 2.02226624871116645580e-21
	pio2p3t = 8.47842766036889956997e-32
)

// remPio2 reduces x to y0+y1 in [-pi/4, pi/4] and gives n, x being
// n*pi/2 + y0 + y1 (n's two low bits name the quadrant). x must be finite.
func remPio2(x float64) (n int, y0, y1 float64) {
	hx := hi(x)
	ix := hx & 0x7fffffff
	if ix <= 0x3fe921fb { // |x| <= pi/4
		return 0, x, 0
	}
	if ix < 0x4002d97c { // |x| < 3pi/4: one pi/2 to take
		sign := 1.0
		if hx < 0 {
			sign = -1
		}
		z := x - sign*pio2p1
		if ix != 0x3ff921fb {
			y0 = z - sign*pio2p1t
			y1 = (z - y0) - sign*pio2p1t
		} else { // x near pi/2: 33 more bits of pi/2
			z -= sign * pio2p2
			y0 = z - sign*pio2p2t
			y1 = (z - y0) - sign*pio2p2t
		}
		return int(sign), y0, y1
	}
	if ix > 0x413921fb { // |x| > 2**19 pi/2
		return remPio2Big(x)
	}
	t := math.Abs(x)
	n = int(float64(t*invPio2) + 0.5)
	fn := float64(n)
	r := t - float64(fn*pio2p1)
	w := fn * pio2p1t
	j := ix >> 20
	y0 = r - w
	if n >= 32 || ix != nPio2Hi(n) {
		// the result lost bits to cancellation: take the next 33 bits
		// of pi/2, and then the next again, while it keeps losing them.
		if i := j - (hi(y0)>>20)&0x7ff; i > 16 {
			t = r
			w = fn * pio2p2
			r = t - w
			w = float64(fn*pio2p2t) - ((t - r) - w)
			y0 = r - w
			if i = j - (hi(y0)>>20)&0x7ff; i > 49 {
				t = r
				w = fn * pio2p3
				r = t - w
				w = float64(fn*pio2p3t) - ((t - r) - w)
				y0 = r - w
			}
		}
	}
	y1 = (r - y0) - w
	if hx < 0 {
		return -n, -y0, -y1
	}
	return n, y0, y1
}

// nPio2Hi gives the high word of n*pi/2 for n from 1 to 31: an argument
// with a different high word loses fewer bits to the subtraction than
// one that shares it.
func nPio2Hi(n int) int32 {
	return hi(float64(n) * (math.Pi / 2))
}

// bigPio2 is pi/2 to bigPrec bits, computed once by Machin's formula.
var (
	bigPio2Once sync.Once
	bigPio2     *big.Float
)

// bigPrec covers the 1024 bits of the largest double's integer part, the
// 53 of the result and the most any double loses to cancellation.
const bigPrec = 1024 + 53 + 128

// remPio2Big is remPio2 for |x| above 2**19 pi/2, where n*pi/2 needs more
// bits of pi than three doubles hold: the reduction is done exactly with
// big.Float, and y0+y1 is the reduced argument rounded to 106 bits.
func remPio2Big(x float64) (int, float64, float64) {
	bigPio2Once.Do(func() {
		pi := new(big.Float).SetPrec(bigPrec)
		pi.Sub(new(big.Float).Mul(big.NewFloat(16), bigAtanInv(5)), new(big.Float).Mul(big.NewFloat(4), bigAtanInv(239)))
		bigPio2 = pi.Quo(pi, big.NewFloat(2))
	})
	bx := new(big.Float).SetPrec(bigPrec).SetFloat64(x)
	q := new(big.Float).SetPrec(bigPrec).Quo(bx, bigPio2)
	// n is q rounded to the nearest integer
	q.Add(q, new(big.Float).SetFloat64(math.Copysign(0.5, x)))
	n, _ := q.Int(nil)
	r := new(big.Float).SetPrec(bigPrec).SetInt(n)
	r.Mul(r, bigPio2)
	r.Sub(bx, r)
	y0, _ := r.Float64()
	y1, _ := r.Sub(r, new(big.Float).SetFloat64(y0)).Float64()
	quadrant := new(big.Int).And(n, big.NewInt(3)).Int64()
	return int(quadrant), y0, y1
}

// bigAtanInv gives atan(1/k) to bigPrec bits by its Taylor series.
func bigAtanInv(k int64) *big.Float {
	sum := new(big.Float).SetPrec(bigPrec + 32)
	kk := new(big.Float).SetPrec(bigPrec + 32).SetInt64(k * k)
	term := new(big.Float).SetPrec(bigPrec+32).Quo(big.NewFloat(1), new(big.Float).SetInt64(k))
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -(bigPrec + 32))
	t := new(big.Float).SetPrec(bigPrec + 32)
	for i := int64(0); ; i++ {
		t.Quo(term, new(big.Float).SetInt64(2*i+1))
		if i%2 == 0 {
			sum.Add(sum, t)
		} else {
			sum.Sub(sum, t)
		}
		if t.Cmp(eps) < 0 {
			return sum
		}
		term.Quo(term, kk)
	}
}

// The odd polynomial of sin on [-pi/4, pi/4]: sin(x) ~ x + s1 x^3 + ...
const (
	sinS1 = -1.66666666666666324348e-01
	sinS2 = 8.33333333332248946124e-03
	sinS3 = -1.98412698298579493134e-04
	sinS4 = 2.75573137070700676789e-06
	sinS5 = -2.50507602534068634195e-08
	sinS6 = 1.58969099521155010221e-10
)

// kernelSin gives sin(x+y) for |x+y| <= pi/4, y being x's tail (0 when
// tail is false).
func kernelSin(x, y float64, tail bool) float64 {
	if hi(x)&0x7fffffff < 0x3e400000 && int(x) == 0 { // |x| < 2**-27
		return x
	}
	z := x * x
	v := z * x
	r := sinS2 + z*(sinS3+z*(sinS4+z*(sinS5+z*sinS6)))
	if !tail {
		return x + float64(v*(sinS1+float64(z*r)))
	}
	return x - ((float64(z*(0.5*y-float64(v*r))) - y) - float64(v*sinS1))
}

// The even polynomial of cos on [-pi/4, pi/4]: cos(x) ~ 1 - x^2/2 + c1
// x^4 + ...
const (
	cosC1 = 4.16666666666666019037e-02
	cosC2 = -1.38888888888741095749e-03
	cosC3 = 2.48015872894767294178e-05
	cosC4 = -2.75573143513906633035e-07
	cosC5 = 2.08757232129817482790e-09
	cosC6 = -1.13596475577881948265e-11
)

// kernelCos gives cos(x+y) for |x+y| <= pi/4, y being x's tail.
func kernelCos(x, y float64) float64 {
	ix := hi(x) & 0x7fffffff
	if ix < 0x3e400000 && int(x) == 0 { // |x| < 2**-27
		return 1
	}
	z := x * x
	r := z * (cosC1 + z*(cosC2+z*(cosC3+z*(cosC4+z*(cosC5+z*cosC6)))))
	if ix < 0x3fd33333 { // |x| < 0.3
		return 1 - (0.5*z - (float64(z*r) - float64(x*y)))
	}
	qx := 0.28125
	if ix <= 0x3fe90000 { // |x| <= 0.78125: x*x/4 with its low word cleared
		qx = math.Float64frombits(uint64(uint32(ix-0x00200000)) << 32)
	}
	hz := 0.5*z - qx
	a := 1 - qx
	return a - (hz - (float64(z*r) - float64(x*y)))
}

// The odd polynomial of tan on [0, 0.67434]: tan(x) ~ x + t0 x^3 + ...
var tanT = [13]float64{
	3.33333333333334091986e-01,
	1.33333333333201242699e-01,
	5.39682539762260521377e-02,
	2.18694882948595424599e-02,
	8.86323982359930005737e-03,
	3.59207910759131235356e-03,
	1.45620945432529025516e-03,
	5.88041240820264096874e-04,
	2.46463134818469906812e-04,
	7.81794442939557092300e-05,
	7.14072491382608190305e-05,
	-1.85586374855275456654e-05,
	2.59073051863633712884e-05,
}

const fdPio4Lo = 3.06161699786838301793e-17

// kernelTan gives tan(x+y) for |x+y| <= pi/4 when k is 1, and
// -1/tan(x+y) when k is -1; y is x's tail.
func kernelTan(x, y float64, k int) float64 {
	hx := hi(x)
	ix := hx & 0x7fffffff
	if ix < 0x3e300000 && int(x) == 0 { // |x| < 2**-28
		switch {
		case uint32(ix)|lo(x) == 0 && k == -1:
			return 1 / math.Abs(x)
		case k == 1:
			return x
		}
		return negInverse(x, y)
	}
	big := ix >= 0x3fe59428 // |x| >= 0.6744: tan(pi/4 - x) is better
	if big {
		if hx < 0 {
			x, y = -x, -y
		}
		z := fdPio4Hi - x
		w := fdPio4Lo - y
		x = z + w
		y = 0
	}
	z := x * x
	w := z * z
	// the odd and even terms apart, to shorten the chain of operations
	r := tanT[1] + w*(tanT[3]+w*(tanT[5]+w*(tanT[7]+w*(tanT[9]+w*tanT[11]))))
	v := z * (tanT[2] + w*(tanT[4]+w*(tanT[6]+w*(tanT[8]+w*(tanT[10]+w*tanT[12])))))
	s := z * x
	r = y + float64(z*(float64(s*(r+v))+y))
	r += float64(tanT[0] * s)
	w = x + r
	if big {
		v = float64(k)
		sign := float64(1 - (hx>>30)&2)
		return sign * (v - 2*(x-(float64(w*w)/(w+v)-r)))
	}
	if k == 1 {
		return w
	}
	return negInverse(x, r)
}

// negInverse gives -1/(x+y), y being x's tail, with x+y split into high
// and low parts for accuracy.
func negInverse(x, y float64) float64 {
	w := x + y
	z := zeroLo(w)
	v := y - (z - x)
	a := -1 / w
	t := zeroLo(a)
	s := 1 + float64(t*z)
	return t + float64(a*(s+float64(t*v)))
}

// javaSin is Java's StrictMath.sin.
func javaSin(x float64) float64 {
	if hi(x)&0x7fffffff <= 0x3fe921fb {
		return kernelSin(x, 0, false)
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	n, y0, y1 := remPio2(x)
	switch n & 3 {
	case 0:
		return kernelSin(y0, y1, true)
	case 1:
		return kernelCos(y0, y1)
	case 2:
		return -kernelSin(y0, y1, true)
	}
	return -kernelCos(y0, y1)
}

// javaCos is Java's StrictMath.cos.
func javaCos(x float64) float64 {
	if hi(x)&0x7fffffff <= 0x3fe921fb {
		return kernelCos(x, 0)
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	n, y0, y1 := remPio2(x)
	switch n & 3 {
	case 0:
		return kernelCos(y0, y1)
	case 1:
		return -kernelSin(y0, y1, true)
	case 2:
		return -kernelCos(y0, y1)
	}
	return kernelSin(y0, y1, true)
}

// javaTan is Java's StrictMath.tan.
func javaTan(x float64) float64 {
	if hi(x)&0x7fffffff <= 0x3fe921fb {
		return kernelTan(x, 0, 1)
	}
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	n, y0, y1 := remPio2(x)
	return kernelTan(y0, y1, 1-(n&1)<<1)
}

// The approximation of log(1+f) = f - f*f/2 + s*(f*f/2 + R), s = f/(2+f),
// R a polynomial in s*s.
const (
	logLn2Hi = 6.93147180369123816490e-01
	logLn2Lo = 1.90821492927058770002e-10
	logL1    = 6.666666666666735130e-01
	logL2    = 3.999999999940941908e-01
	logL3    = 2.857142874366239149e-01
	logL4    = 2.222219843214978396e-01
	logL5    = 1.818357216161805012e-01
	logL6    = 1.531383769920937332e-01
	logL7    = 1.479819860511658591e-01
	two54    = 1 << 54
)

// logArg takes apart the argument of log and log10: for zero, a negative
// number, infinity or NaN it gives the result (done); else x scaled to a
// normal number when it was subnormal, its high word and its binary
// exponent.
func logArg(x float64) (r float64, done bool, y float64, hx, k int32) {
	hx = hi(x)
	if hx < 0x00100000 { // x < 2**-1022: zero, negative or subnormal
		switch {
		case uint32(hx&0x7fffffff)|lo(x) == 0:
			return math.Inf(-1), true, 0, 0, 0
		case hx < 0:
			return math.NaN(), true, 0, 0, 0
		}
		k -= 54
		x *= two54
		hx = hi(x)
	}
	if hx >= 0x7ff00000 {
		return x + x, true, 0, 0, 0
	}
	return 0, false, x, hx, k + hx>>20 - 1023
}

// javaLog is Java's StrictMath.log.
func javaLog(x float64) float64 {
	special, done, x, hx, k := logArg(x)
	if done {
		return special
	}
	hx &= 0x000fffff
	i := (hx + 0x95f64) & 0x100000
	x = withHi(x, hx|(i^0x3ff00000)) // x or x/2, within [sqrt(2)/2, sqrt(2)]
	k += i >> 20
	f := x - 1
	dk := float64(k)
	if 0x000fffff&(2+hx) < 3 { // |f| < 2**-20
		if f == 0 {
			if k == 0 {
				return 0
			}
			return float64(dk*logLn2Hi) + float64(dk*logLn2Lo)
		}
		r := float64(f*f) * (0.5 - float64(0.33333333333333333*f))
		if k == 0 {
			return f - r
		}
		return float64(dk*logLn2Hi) - ((r - float64(dk*logLn2Lo)) - f)
	}
	s := f / (2 + f)
	z := s * s
	w := z * z
	t1 := w * (logL2 + w*(logL4+w*logL6))
	t2 := z * (logL1 + w*(logL3+w*(logL5+w*logL7)))
	r := t2 + t1
	if (hx-0x6147a)|(0x6b851-hx) > 0 {
		hfsq := 0.5 * f * f
		if k == 0 {
			return f - (hfsq - float64(s*(hfsq+r)))
		}
		return float64(dk*logLn2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(dk*logLn2Lo))) - f)
	}
	if k == 0 {
		return f - float64(s*(f-r))
	}
	return float64(dk*logLn2Hi) - ((float64(s*(f-r)) - float64(dk*logLn2Lo)) - f)
}

const (
	ivLn10   = 4.34294481903251816668e-01
	log102Hi = 3.01029995663611771306e-01
	log102Lo = 3.69423907715893078616e-13
)

// javaLog10 is Java's StrictMath.log10: log10(2**k * m) computed as
// k*log10(2) + log(m)/ln(10) with log10(2) in two parts, which is exact
// for powers of ten.
func javaLog10(x float64) float64 {
	special, done, x, hx, k := logArg(x)
	if done {
		return special
	}
	i := int32(uint32(k) >> 31)
	hx = hx&0x000fffff | (0x3ff-i)<<20
	y := float64(k + i)
	x = withHi(x, hx)
	z := float64(y*log102Lo) + float64(ivLn10*javaLog(x))
	return z + float64(y*log102Hi)
}
