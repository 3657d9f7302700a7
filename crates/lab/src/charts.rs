//! PNG charts with plotters (bitmap backend, text drawn with ab_glyph from DejaVuSans, which
//! is registered once): a grouped bar chart of QPS per system per workload, and for each
//! workload a two-panel timeline — per-second QPS, and per-tier hit ratios (DRAM, BPE).
//!
//! Owns: chart layout and colours.
//! Must never: compute results (it draws what it is given).

use crate::Measurement;
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

fn register_font() -> Result<()> {
    let mut err = None;
    FONT.call_once(|| match std::fs::read(crate::util::FONT) {
        Ok(bytes) => {
            let b: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, b).is_err() {
                err = Some("cannot parse the font".to_string());
            }
        }
        Err(e) => err = Some(format!("{}: {e}", crate::util::FONT)),
    });
    match err {
        Some(e) => Err(anyhow!(e)),
        None => Ok(()),
    }
}

const COLORS: [RGBColor; 5] = [
    RGBColor(120, 120, 120),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

fn e<T: std::fmt::Debug>(x: T) -> anyhow::Error {
    anyhow!("plotting: {x:?}")
}

/// Grouped bars: QPS of each system for each workload of one test type.
pub fn qps_bars(
    path: &Path,
    title: &str,
    workloads: &[String],
    systems: &[&str],
    ms: &[&Measurement],
) -> Result<()> {
    register_font()?;
    let root = BitMapBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let qps = |w: &str, s: &str| {
        ms.iter()
            .find(|m| m.workload == w && m.system.name() == s)
            .map(|m| m.result.qps)
            .unwrap_or(0.0)
    };
    let ymax = ms.iter().map(|m| m.result.qps).fold(1.0, f64::max) * 1.15;
    let n = systems.len().max(1) as f64;
    let wl: Vec<String> = workloads.to_vec();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..workloads.len() as f64, 0.0..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(workloads.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.01 && i < wl.len() {
                wl[i].clone()
            } else {
                String::new()
            }
        })
        .y_desc("queries per second")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    for (si, s) in systems.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let bars: Vec<_> = workloads
            .iter()
            .enumerate()
            .map(|(wi, w)| {
                let x0 = wi as f64 + 0.1 + 0.8 * si as f64 / n;
                let x1 = x0 + 0.8 / n * 0.9;
                Rectangle::new([(x0, 0.0), (x1, qps(w, s))], color.filled())
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(e)?
            .label(*s)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        let labels: Vec<_> = workloads
            .iter()
            .enumerate()
            .map(|(wi, w)| {
                let x0 = wi as f64 + 0.1 + 0.8 * si as f64 / n;
                Text::new(
                    format!("{:.0}", qps(w, s)),
                    (x0, qps(w, s) + ymax * 0.01),
                    ("sans-serif", 12),
                )
            })
            .collect();
        chart.draw_series(labels).map_err(e)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

/// Per-second QPS (top) and hit ratios (bottom: DRAM solid, BPE thin) of each system in one
/// workload of one test type.
pub fn timeline(path: &Path, title: &str, ms: &[&Measurement]) -> Result<()> {
    register_font()?;
    let root = BitMapBackend::new(path, (1000, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(e)?;
    let (top, bottom) = root.split_vertically(380);
    let xmax = ms
        .iter()
        .flat_map(|m| m.rows.iter().map(|r| r.sec))
        .fold(1.0, f64::max);
    let ymax = ms
        .iter()
        .flat_map(|m| m.rows.iter().map(|r| r.qps))
        .fold(1.0, f64::max)
        * 1.1;
    let mut c = ChartBuilder::on(&top)
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)
        .map_err(e)?;
    c.configure_mesh()
        .y_desc("QPS (Questions/s)")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    for (i, m) in ms.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        c.draw_series(LineSeries::new(
            m.rows.iter().map(|r| (r.sec, r.qps)),
            color.stroke_width(2),
        ))
        .map_err(e)?
        .label(m.system.name())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    let mut h = ChartBuilder::on(&bottom)
        .margin(10)
        .x_label_area_size(34)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..xmax, 0.0..1.05)
        .map_err(e)?;
    h.configure_mesh()
        .x_desc("seconds into the measured run")
        .y_desc("hit ratio")
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    for (i, m) in ms.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        h.draw_series(LineSeries::new(
            m.rows.iter().filter_map(|r| r.dram_hit.map(|v| (r.sec, v))),
            color.stroke_width(2),
        ))
        .map_err(e)?
        .label(format!("{} DRAM", m.system.name()))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        if m.rows.iter().any(|r| r.bpe_hit.is_some()) {
            let light = color.mix(0.6);
            h.draw_series(PointSeries::of_element(
                m.rows.iter().filter_map(|r| r.bpe_hit.map(|v| (r.sec, v))),
                3,
                light.filled(),
                &|c, s, st| Circle::new(c, s, st),
            ))
            .map_err(e)?
            .label(format!("{} BPE", m.system.name()))
            .legend(move |(x, y)| Circle::new((x + 8, y), 3, light.filled()));
        }
    }
    h.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 12))
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}
