//! One formatter per kind of number, exactly as tfprof prints them
//! (`tfprof_utils.cc`): 1000-based units, `%.2f` with round-half-even on the
//! exact binary value (which is what Rust's `{:.2}` does too), no GB unit.

use std::fmt::Write;

/// Appends `n` with `small` below the first scale, else divided by the
/// largest scale it reaches, with two decimals and that scale's suffix.
fn write_scaled(out: &mut String, n: i64, small: &str, scales: &[(i64, &str)]) {
    match scales.iter().rev().find(|(scale, _)| n >= *scale) {
        Some(&(scale, suffix)) => {
            write_hundredths(out, n, scale);
            out.push_str(suffix);
        }
        None => {
            out.push_str(itoa::Buffer::new().format(n));
            out.push_str(small);
        }
    }
}

/// Appends `n / scale` (`scale` a power of ten from 1000 up, `n >= scale`)
/// as `%.2f` prints the double `n as f64 / scale as f64`, in integers where
/// that is exact: views print millions of these, and float formatting is
/// most of a line's cost.
///
/// Below 2^53, `n` converts exactly and the double quotient is within
/// `1/scale` of `n/scale`, while a quotient that is not on a tie between
/// two hundredths is at least `1/scale` from every tie: the double rounds
/// to the same hundredth as the exact quotient. On a tie, the double's
/// binary value decides, so the float path formats it.
fn write_hundredths(out: &mut String, n: i64, scale: i64) {
    let unit = scale / 100;
    let (hundredths, rest) = (n / unit, n % unit);
    if n >= 1 << 53 || 2 * rest == unit {
        let _ = write!(out, "{:.2}", n as f64 / scale as f64);
        return;
    }
    let rounded = hundredths + i64::from(2 * rest > unit);
    out.push_str(itoa::Buffer::new().format(rounded / 100));
    let cents = (rounded % 100) as u8;
    out.push('.');
    out.push(char::from(b'0' + cents / 10));
    out.push(char::from(b'0' + cents % 10));
}

const COUNT_SCALES: [(i64, &str); 3] = [(1_000, "k"), (1_000_000, "m"), (1_000_000_000, "b")];
const MICROS_SCALES: [(i64, &str); 2] = [(1_000, "ms"), (1_000_000, "sec")];
const BYTES_SCALES: [(i64, &str); 2] = [(1_000, "KB"), (1_000_000, "MB")];

/// Appends a count (params, float ops, occurrences; `FormatNumber`).
pub fn write_count(out: &mut String, n: i64) {
    write_scaled(out, n, "", &COUNT_SCALES);
}

/// Appends a duration given in microseconds (`FormatTime`).
pub fn write_micros(out: &mut String, us: i64) {
    write_scaled(out, us, "us", &MICROS_SCALES);
}

/// Appends a memory size in bytes (`FormatMemory`).
pub fn write_bytes(out: &mut String, b: i64) {
    write_scaled(out, b, "B", &BYTES_SCALES);
}

fn to_string(write: fn(&mut String, i64), n: i64) -> String {
    let mut out = String::new();
    write(&mut out, n);
    out
}

/// Counts: params, float ops, occurrences (`FormatNumber`).
pub fn count(n: i64) -> String {
    to_string(write_count, n)
}

/// Durations given in microseconds (`FormatTime`).
pub fn micros(us: i64) -> String {
    to_string(write_micros, us)
}

/// Durations in microseconds with nanoseconds (GPU kernels last a few
/// µs, which whole microseconds would blur): `12.345us`, then tfprof's
/// `ms` and `sec` with two decimals.
pub fn micros_f64(us: f64) -> String {
    if us.abs() >= 1e6 {
        format!("{:.2}sec", us / 1e6)
    } else if us.abs() >= 1e3 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{us:.3}us")
    }
}

/// Memory sizes in bytes (`FormatMemory`).
pub fn bytes(b: i64) -> String {
    to_string(write_bytes, b)
}

/// A percentage with two decimals, without the `%` sign.
pub fn percent(value: f64) -> String {
    format!("{value:.2}")
}

/// Tensor shapes: dims joined by `x` (`FormatShapes`).
pub fn shape(dims: &[i64]) -> String {
    let mut out = String::new();
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            out.push('x');
        }
        out.push_str(itoa::Buffer::new().format(*d));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_switch_at_powers_of_thousand() {
        assert_eq!(count(999), "999");
        assert_eq!(count(10_440), "10.44k");
        assert_eq!(count(930_580), "930.58k");
        assert_eq!(count(1_000_000), "1.00m");
        assert_eq!(count(2_500_000_000), "2.50b");
        assert_eq!(micros(999), "999us");
        assert_eq!(micros(4_541), "4.54ms");
        assert_eq!(micros(1_370_000), "1.37sec");
        assert_eq!(bytes(1_280), "1.28KB");
        assert_eq!(bytes(120_356_380_000), "120356.38MB");
        assert_eq!(bytes(-5), "-5B");
    }

    #[test]
    fn ties_round_to_even_like_printf() {
        assert_eq!(bytes(1_125), "1.12KB");
        assert_eq!(bytes(1_375), "1.38KB");
    }

    /// The integer path prints what float formatting of the double
    /// quotient prints: every value up to 3 million (all three scales,
    /// every rounding case of KB and ms), the values around the ties of
    /// larger ones, and values near 2^53 and beyond.
    #[test]
    fn hundredths_match_float_formatting() {
        let float = |n: i64, scale: i64| format!("{:.2}", n as f64 / scale as f64);
        let ints = |n: i64, scale: i64| {
            let mut out = String::new();
            write_hundredths(&mut out, n, scale);
            out
        };
        let scales = [1_000, 1_000_000, 1_000_000_000];
        for n in 1_000..3_000_000 {
            for scale in scales.into_iter().filter(|&s| n >= s) {
                assert_eq!(ints(n, scale), float(n, scale), "{n} / {scale}");
            }
        }
        let mut rng = crate::test_random::XorShift::new(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            let bits = rng.below(63);
            let base = (rng.next() >> (64 - bits.max(10))) as i64;
            for scale in scales {
                let unit = scale / 100;
                // A tie of this scale near `base`, and its neighbours.
                let tie = (base / unit) * unit + unit / 2;
                for n in [base, tie - 1, tie, tie + 1] {
                    if n >= scale {
                        assert_eq!(ints(n, scale), float(n, scale), "{n} / {scale}");
                    }
                }
            }
        }
        for n in [(1 << 53) - 1, 1 << 53, (1 << 53) + 1, i64::MAX] {
            assert_eq!(ints(n, 1_000_000), float(n, 1_000_000), "{n}");
        }
    }

    #[test]
    fn shapes_join_with_x() {
        assert_eq!(shape(&[3, 3, 3, 6]), "3x3x3x6");
        assert_eq!(shape(&[]), "");
    }
}
