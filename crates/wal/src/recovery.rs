//! Opening a redo directory: find the checkpoint, find the end of the valid log, cut off a
//! torn tail, and hand back a log ready for appends.
//!
//! Steps: create the directory if missing; drop a stale `control.tmp`; read `control` (no
//! file = checkpoint 0); list the segment files; check the checkpoint lies inside the first
//! segment that is not wholly below it; take the longest run of contiguous segments from
//! there (a segment that does not start exactly where the previous one ends follows a lost
//! tail); scan records from the checkpoint to the end of that run; truncate the segment
//! holding the valid end to it and delete every later segment file; fsync what changed;
//! delete segments wholly below the checkpoint (a checkpoint's deletions may have been cut
//! short by a crash); delete a leftover spare segment (`prefill`).
//!
//! Must never: delete or truncate anything before every check that can fail with `Corrupt`
//! has passed; leave bytes past the valid end in any file (they could later be read as
//! records once appends reach them); start a log whose checkpoint is not covered by a
//! segment (that would silently skip redo).

use std::fs;
use std::io;

use crate::config::{WalConfig, MIN_SEGMENT_SIZE_BYTES};
use crate::control::{self, CONTROL_TMP_FILE};
use crate::error::WalError;
use crate::reader::{SegmentView, StopReason, WalReader};
use crate::segment::{list_segment_files, remove_segment_file, Segment};
use crate::wal::Shared;
use crate::writer::Writer;
use crate::DeviceOpener;

pub(crate) fn open(cfg: &WalConfig, opener: DeviceOpener) -> Result<Shared, WalError> {
    if cfg.segment_size_bytes < MIN_SEGMENT_SIZE_BYTES {
        return Err(WalError::InvalidArgument(format!(
            "segment_size_bytes {} is below the minimum {MIN_SEGMENT_SIZE_BYTES}",
            cfg.segment_size_bytes
        )));
    }
    if cfg.buffer_size_bytes == 0 {
        return Err(WalError::InvalidArgument(
            "buffer_size_bytes must be > 0".to_string(),
        ));
    }
    let dir = &cfg.dir;
    fs::create_dir_all(dir).map_err(|e| WalError::io(format!("creating {}", dir.display()), e))?;
    let tmp = dir.join(CONTROL_TMP_FILE);
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(WalError::io(format!("deleting {}", tmp.display()), e)),
    }
    let checkpoint = control::read(dir)?.unwrap_or(0);

    let mut segs = Vec::new();
    for (base, path) in list_segment_files(dir)? {
        segs.push(Segment::open(&opener, base, path)?);
    }

    // Segments wholly below the checkpoint are dead; the last segment is always kept (it
    // is where appends resume when the checkpoint is at its very end).
    let n_dead = segs
        .iter()
        .take_while(|s| s.end() <= checkpoint)
        .count()
        .min(segs.len().saturating_sub(1));
    let live = &segs[n_dead..];
    match live.first() {
        None if checkpoint == 0 => {}
        None => {
            return Err(WalError::Corrupt {
                context: dir.display().to_string(),
                detail: format!("no redo segment files, but the checkpoint is at LSN {checkpoint}"),
            })
        }
        Some(first) if first.base > checkpoint || first.end() < checkpoint => {
            return Err(WalError::Corrupt {
                context: dir.display().to_string(),
                detail: format!(
                    "checkpoint LSN {checkpoint} is not inside the redo log (first live segment \
                     {} holds LSNs {}..{})",
                    first.path.display(),
                    first.base,
                    first.end()
                ),
            })
        }
        Some(_) => {}
    }

    // The readable stream: the longest run of contiguous segments.
    let mut n_contig = live.len().min(1);
    while n_contig < live.len() && live[n_contig].base == live[n_contig - 1].end() {
        n_contig += 1;
    }
    if let Some(next) = live.get(n_contig) {
        let prev = &live[n_contig - 1];
        if next.base < prev.end() {
            return Err(WalError::Corrupt {
                context: dir.display().to_string(),
                detail: format!(
                    "segment {} (from LSN {}) overlaps {} (LSNs {}..{})",
                    next.path.display(),
                    next.base,
                    prev.path.display(),
                    prev.base,
                    prev.end()
                ),
            });
        }
    }
    let limit = live
        .get(n_contig.wrapping_sub(1))
        .map_or(checkpoint, Segment::end);

    // Find the end of the valid log.
    let views: Vec<SegmentView> = live[..n_contig]
        .iter()
        .map(|s| SegmentView {
            base: s.base,
            len: s.len,
            dev: s.dev.clone(),
        })
        .collect();
    let mut reader = WalReader::new(views, checkpoint, limit);
    let mut records = 0u64;
    while reader.skip_record()?.is_some() {
        records += 1;
    }
    let valid_end = reader.position().0;
    let stopped_at_garbage = reader.stop_reason() == Some(StopReason::Invalid);

    // Cut: keep segments up to the first one whose end reaches the valid end.
    let mut dir_changed = false;
    let keep = match live[..n_contig].iter().position(|s| valid_end <= s.end()) {
        Some(k) => k + 1,
        None => 0,
    };
    let mut kept: Vec<Segment> = live[..keep].to_vec();
    let cut_files: Vec<&Segment> = live[keep..].iter().collect();
    let mut cut_bytes: u64 = cut_files.iter().map(|s| s.len).sum();
    // The tail past the valid end is only the zeros written ahead of the log (see
    // `writer.rs`), maybe with a segment started from the spare that no durable record
    // reached: a normal crash or kill, not damage worth a warning.
    let zero_tail = cut_bytes + kept.last().map_or(0, |l| l.end().saturating_sub(valid_end)) > 0
        && cut_files.iter().all(|s| all_zero(s, 0))
        && kept
            .last()
            .is_none_or(|last| last.end() <= valid_end || all_zero(last, valid_end - last.base));
    if let Some(last) = kept.last_mut() {
        if last.end() > valid_end {
            let new_len = valid_end - last.base;
            cut_bytes += last.len - new_len;
            let ctx = |what: &str| {
                format!(
                    "{what} {} at the valid log end {valid_end}",
                    last.path.display()
                )
            };
            last.dev
                .set_len(new_len)
                .map_err(|e| WalError::io(ctx("truncating"), e))?;
            last.dev
                .sync()
                .map_err(|e| WalError::io(ctx("fsyncing truncated"), e))?;
            last.len = new_len;
            last.file_len = new_len;
        }
    }
    for s in &cut_files {
        remove_segment_file(&s.path)?;
        dir_changed = true;
    }
    if zero_tail {
        tracing::debug!(
            valid_end,
            cut_bytes,
            "redo log: zeroed tail cut off at open"
        );
    } else if cut_bytes > 0 || stopped_at_garbage {
        tracing::warn!(
            valid_end,
            cut_bytes,
            cut_files = cut_files.len(),
            "redo log: torn or invalid tail cut off at open"
        );
    }
    for s in &segs[..n_dead] {
        remove_segment_file(&s.path)?;
        dir_changed = true;
    }
    if kept.is_empty() {
        kept.push(Segment::create(&opener, dir, checkpoint)?);
        dir_changed = true;
    }
    if dir_changed {
        control::sync_dir(dir)?;
    }
    tracing::info!(
        checkpoint,
        valid_end,
        records,
        segments = kept.len(),
        "redo log opened"
    );

    debug_assert_eq!(kept.last().map(Segment::end), Some(valid_end));
    let writer = Writer {
        dir: dir.clone(),
        opener,
        segment_size_bytes: cfg.segment_size_bytes,
        segs: kept,
        written: valid_end,
        spare: Vec::with_capacity(cfg.buffer_size_bytes),
        unsynced: Vec::new(),
        dir_dirty: false,
        prefill: std::sync::Arc::new(crate::prefill::Prefill::new(dir, cfg.segment_size_bytes)),
        from_spare: 0,
    };
    Ok(Shared::new(cfg, writer, valid_end, checkpoint))
}

/// True when every byte of `seg` from `from` (an offset in the file) to its end is zero
/// (a read error counts as "not zero": the caller then just warns).
fn all_zero(seg: &Segment, from: u64) -> bool {
    let mut buf = vec![0u8; 64 << 10];
    let mut at = from;
    while at < seg.len {
        let n = (seg.len - at).min(buf.len() as u64) as usize;
        if seg.dev.read_at(&mut buf[..n], at).is_err() || buf[..n].iter().any(|&b| b != 0) {
            return false;
        }
        at += n as u64;
    }
    true
}
