//! Tag 1 (epoch-based date/time) rendered as an RFC 3339 string in UTC with nanoseconds trimmed
//! (Go's RFC3339Nano), as Kubernetes does when such a tag is decoded into a string or any value.

use crate::error::{Error, ErrorKind, Result};

/// Formats `secs` + `nanos` (0..1e9) seconds since the Unix epoch; years outside 0..=9999 fail.
pub(crate) fn rfc3339_nano(secs: i64, nanos: u32, offset: usize) -> Result<String> {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if !(0..=9999).contains(&y) {
        return Err(Error::at(
            ErrorKind::UnsupportedValue,
            offset,
            format!("epoch time {secs} is outside the years 0000-9999"),
        ));
    }
    let mut s = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    if nanos > 0 {
        let frac = format!("{nanos:09}");
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s.push('Z');
    Ok(s)
}

/// Tag 1 with integer content.
pub(crate) fn from_int(v: i128, offset: usize) -> Result<String> {
    let secs = i64::try_from(v).map_err(|_| out_of_range(offset))?;
    rfc3339_nano(secs, 0, offset)
}

/// Tag 1 with float content (finite; checked by the caller).
pub(crate) fn from_float(f: f64, offset: usize) -> Result<String> {
    let whole = f.trunc();
    if !(-1e17..=1e17).contains(&whole) {
        return Err(out_of_range(offset));
    }
    let mut secs = whole as i64;
    let mut nanos = ((f - whole) * 1e9) as i64;
    if nanos < 0 {
        secs -= 1;
        nanos += 1_000_000_000;
    }
    rfc3339_nano(secs, nanos as u32, offset)
}

fn out_of_range(offset: usize) -> Error {
    Error::at(
        ErrorKind::UnsupportedValue,
        offset,
        "epoch time is out of range",
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs() {
        assert_eq!(from_int(1, 0).unwrap(), "1970-01-01T00:00:01Z");
        assert_eq!(from_int(1363896240, 0).unwrap(), "2013-03-21T20:04:00Z");
        assert_eq!(
            from_float(1363896240.5, 0).unwrap(),
            "2013-03-21T20:04:00.5Z"
        );
        assert_eq!(from_int(-1, 0).unwrap(), "1969-12-31T23:59:59Z");
        assert_eq!(from_float(-0.5, 0).unwrap(), "1969-12-31T23:59:59.5Z");
        assert_eq!(from_int(951_782_400, 0).unwrap(), "2000-02-29T00:00:00Z");
        assert_eq!(from_int(253402300799, 0).unwrap(), "9999-12-31T23:59:59Z");
        assert_eq!(
            from_int(253402300800, 0).unwrap_err().kind(),
            ErrorKind::UnsupportedValue
        );
    }
}
