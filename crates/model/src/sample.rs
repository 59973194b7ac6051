//! Statistics of samples (step times, per-step numbers) that several
//! analyses report, written once.

/// Mean, sample standard deviation and coefficient of variation.
pub fn stats_of(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 { values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    let std = var.sqrt();
    (mean, std, if mean != 0.0 { std / mean } else { 0.0 })
}
