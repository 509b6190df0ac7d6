package results

import "math"

// studentTCDF is the cumulative distribution function of Student's t with
// nu degrees of freedom (nu > 0, not necessarily whole: Welch's df is a
// real number) at t. It replaces gonum's distuv.StudentsT, which linked
// 1.3 MB of gonum for this one function; tdist_test.go holds gonum's values
// and checks these to 1e-9.
//
// P(T ≤ t) for t < 0 is ½·I_x(ν/2, ½) with x = ν/(ν + t²), I the
// regularized incomplete beta function; for t ≥ 0 it is 1 minus that.
func studentTCDF(t, nu float64) float64 {
	if math.IsNaN(t) || math.IsNaN(nu) || nu <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		if t > 0 {
			return 1
		}
		return 0
	}
	tail := 0.5 * regIncBeta(nu/2, 0.5, nu/(nu+t*t))
	if t < 0 {
		return tail
	}
	return 1 - tail
}

// regIncBeta is the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and 0 ≤ x ≤ 1: the continued fraction of Numerical Recipes
// (§6.4, betacf) evaluated by the modified Lentz method, on the side of
// x where it converges quickly (x < (a+1)/(a+b+2)), by symmetry
// I_x(a, b) = 1 − I_{1−x}(b, a) on the other.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	// x^a (1−x)^b / (a B(a, b)), in logarithms against overflow.
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction for I_x(a, b) by the modified
// Lentz method (Numerical Recipes §5.2, §6.4).
func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 300
		eps     = 1e-16
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 - qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		// The even step.
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// The odd step.
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
