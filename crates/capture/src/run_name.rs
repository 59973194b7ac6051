//! A run's name: the local time, as XProf names runs.

use std::path::Path;

/// The local time as `YYYY_MM_DD_HH_MM_SS` (TSL's
/// `GetCurrentTimeStampAsString`, which XProf's runs are named by).
pub fn local_timestamp() -> String {
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: `tm` is plain data that localtime_r fills in whole.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let local = unsafe { !libc::localtime_r(&now, &mut tm).is_null() };
    if !local {
        return "1970_01_01_00_00_00".to_owned();
    }
    format!("{:04}_{:02}_{:02}_{:02}_{:02}_{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
}

/// `stamp`, or `stamp_2`, `stamp_3`, … if a run of that name is already in
/// `profile_dir`: two captures within a second (`--count` with a short
/// `--interval_s`) stay apart instead of overwriting each other.
pub fn unused(profile_dir: &Path, stamp: &str) -> String {
    let mut name = stamp.to_owned();
    let mut n = 1;
    while profile_dir.join(&name).exists() {
        n += 1;
        name = format!("{stamp}_{n}");
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timestamp_has_xprofs_shape() {
        let stamp = local_timestamp();
        let parts: Vec<&str> = stamp.split('_').collect();
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), [4, 2, 2, 2, 2, 2], "{stamp}");
        assert!(parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit())), "{stamp}");
    }

    #[test]
    fn a_taken_name_gets_a_suffix() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(unused(dir.path(), "2026_01_01_00_00_00"), "2026_01_01_00_00_00");
        std::fs::create_dir(dir.path().join("2026_01_01_00_00_00")).unwrap();
        std::fs::create_dir(dir.path().join("2026_01_01_00_00_00_2")).unwrap();
        assert_eq!(unused(dir.path(), "2026_01_01_00_00_00"), "2026_01_01_00_00_00_3");
    }
}
