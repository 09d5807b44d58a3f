//! `--memory`: how much memory a run may use, as the user writes it
//! (`2G`, `512M`, `1.5GB`, a number of bytes), and the default share of
//! the machine.

/// Parses a size: a number with an optional unit K, M, G or T (powers of
/// 1024; a trailing `B` or `iB` is allowed, any case).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let unitless = lower.trim_end_matches("ib").trim_end_matches('b');
    let (number, shift) = match unitless.chars().last() {
        Some('k') => (&unitless[..unitless.len() - 1], 10),
        Some('m') => (&unitless[..unitless.len() - 1], 20),
        Some('g') => (&unitless[..unitless.len() - 1], 30),
        Some('t') => (&unitless[..unitless.len() - 1], 40),
        _ => (unitless, 0),
    };
    let value: f64 =
        number.trim().parse().map_err(|_| format!("{t:?} is not a size: write it as 2G, 512M or a number of bytes"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("{t:?} is not a usable size"));
    }
    Ok(bytes as u64)
}

/// The default budget: half the machine's memory, as Linux reports it in
/// `/proc/meminfo` (`None`, no limit, where it cannot be read).
pub fn machine_share() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(3 << 29));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("0").is_err());
        assert!(parse_size("-2G").is_err());
    }
}
