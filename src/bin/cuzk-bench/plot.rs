//! The RSS-over-time plot (SVG, plotters) with stage markers.

use std::path::Path;

use plotters::prelude::*;

use crate::anyhow_like::Result;

pub fn rss_svg(path: &Path, samples: &[(f64, u64)], stages: &[(String, f64, u64)]) -> Result<()> {
    let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
    let t_max = samples.last().map(|s| s.0).unwrap_or(1.0).max(1e-3);
    let y_max = samples.iter().map(|s| gib(s.1)).fold(0.0, f64::max) * 1.1 + 1e-3;
    let root = SVGBackend::new(path, (1400, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("cuzk-bench pce-pipeline: RSS over time", ("sans-serif", 22))
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)?;
    chart.configure_mesh().x_desc("time (s)").y_desc("VmRSS (GiB)").draw()?;
    chart.draw_series(LineSeries::new(samples.iter().map(|&(t, r)| (t, gib(r))), &BLUE))?;
    for (i, (label, t, _)) in stages.iter().enumerate() {
        // Per-proof stage markers are many: label only the phase boundaries.
        let major = !label.contains("proof");
        let color = if major { RED.mix(0.8) } else { BLACK.mix(0.15) };
        chart.draw_series(LineSeries::new([(*t, 0.0), (*t, y_max)], color))?;
        if major {
            let y = y_max * (0.95 - 0.05 * (i % 6) as f64);
            chart.draw_series([Text::new(label.clone(), (*t, y), ("sans-serif", 13).into_font())])?;
        }
    }
    root.present()?;
    Ok(())
}
