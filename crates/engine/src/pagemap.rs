//! The page map of the data file: which 16 KiB slot of `tierdb.dat` holds each page, the slot
//! allocator, and the map file `tierdb.map` that a checkpoint makes durable.
//!
//! A map persisted at any time after a checkpoint is valid for that checkpoint: each page's
//! slot holds a version at least as new as the one the checkpoint relied on. So besides each
//! checkpoint, the checkpointer and the cleaners persist the map whenever many slots are held
//! (`wants_persist`), which bounds how far the file grows between checkpoints.
//!
//! Why: the durable disk is capped in IOPS, and dirty pages leaving DRAM are rarely neighbours
//! in the file. Writing each page where it was (in place) costs one I/O per page. Writing a
//! batch of dirty pages into free slots that lie next to each other costs one I/O per batch:
//! the page's new slot goes into the map, its old slot is freed.
//!
//! Owns: [`PageMap`] (page → slot, slot bitmap, next-fit cursor, the slots freed since the
//! last persisted map) and the map file's encoding (see `docs/format.md`, "Page map").
//!
//! Must never: hand out a slot the last *durable* map file still names (a slot freed by a
//! relocation is reused only once a map file written after the relocation is durable — so a
//! crash always finds every page of the durable map intact, and a torn write can only hit a
//! slot no durable map names); persist a map naming a slot whose write is not yet durable
//! (`persist` syncs the data file after taking its copy and before writing the file); name
//! one slot for two pages.
//!
//! Lock order: `persist` (serialises map files) → `map` → `slots` (leaf).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use parking_lot::{Mutex, RwLock};
use tierdb_page::{PageId, PAGE_SIZE};

const MAGIC: &[u8; 8] = b"TDBPGMAP";
const VERSION: u32 = 1;
const HEADER: usize = 32;
/// Slot numbers are stored as `slot + 1` in a u32 (0 = page never written): slots
/// `0 .. 2^32 - 1`.
const MAX_SLOTS: u64 = u32::MAX as u64;
/// Slots per segment, the cleaner's unit (one bitmap word; 1 MiB, read with one I/O).
pub(crate) const SEGMENT: u64 = 64;
/// The cleaner works while fewer segments than this are wholly free (16 MiB of long runs).
const CLEAN_TARGET_FREE_SEGMENTS: u64 = 16;
/// The cleaner leaves alone segments with more live pages than this (moving them would cost
/// more writes than the free slots it gains are worth).
const CLEAN_MAX_LIVE: u16 = 48;
/// A batch is split over free runs of at least this many slots before the file grows.
const MIN_RUN: u64 = 8;
/// The file may grow past its live pages by `free_pct` percent of them (`relocating_free_space`),
/// and by at least this many slots (16 MiB), before allocation settles for short runs.
const GROW_SLACK: u64 = 1024;
/// Held slots past which the map is persisted outside checkpoints (8 MiB of slots).
const PERSIST_HELD_MIN: u64 = 512;
/// Default `relocating_free_space` (percent).
pub const DEFAULT_FREE_PCT: u64 = 50;
/// Bounds of `relocating_free_space` (percent).
pub const FREE_PCT_RANGE: std::ops::RangeInclusive<u64> = 10..=400;

/// A run of adjacent slots handed out for one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub slot: u64,
    pub len: u64,
}

/// A segment being cleaned: its first slot (`SEGMENT` slots) and the free slots reserved
/// meanwhile.
pub(crate) struct Clean {
    pub first: u64,
    reserved: Vec<u64>,
    /// Slots whose write was under way when cleaning began: not copied.
    pub skip: Vec<u64>,
}

/// What `SHOW STATUS` shows of the map.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapStats {
    /// Slots in the data file.
    pub slots: u64,
    /// Pages the map names (each in one slot).
    pub pages: u64,
    /// Slots freed by a relocation and held until the next map file is durable.
    pub held: u64,
    /// Map files written.
    pub persisted: u64,
}

struct Slots {
    /// One bit per slot: named by the map, or freed but held for the durable map.
    used: Vec<u64>,
    /// Slots in the file.
    n: u64,
    /// Pages named by the map.
    live: u64,
    /// Per segment (`SEGMENT` slots = one bitmap word): slots the map names.
    seg_live: Vec<u16>,
    /// Segments a cleaner is working on: their slots are not freed by a persist meanwhile
    /// (a page leaving one of them and coming back to the same slot would fool the cleaner's
    /// compare-and-set into naming its old copy).
    cleaning: Vec<u64>,
    /// Slots being read (count per slot): not freed by a persist meanwhile, so a read that
    /// looked its slot up never finds another page there.
    reading: std::collections::HashMap<u64, u32>,
    /// Slots handed out whose write has not been committed (or given back) yet: a cleaner
    /// skips them (it may have read them before the write landed).
    pending: std::collections::HashSet<u64>,
    /// Segments a cleaner found it could not empty (slots the map names that hold no valid
    /// page, e.g. holes of a file written in place): not chosen again.
    stuck: std::collections::HashSet<u64>,
    /// Slots freed since the last map copy was taken (still named by the durable map).
    held: Vec<u32>,
    /// Slots a running `persist` took from `held`: free once its file is durable.
    releasing: u64,
    cursor: u64,
    persisted: u64,
    /// Free slots the file may hold beyond its live pages, in percent of them, before
    /// allocation settles for short runs.
    free_pct: u64,
    /// The room is at least this many slots (`GROW_SLACK`; tests make it small).
    min_room: u64,
}

impl Slots {
    fn is_used(&self, s: u64) -> bool {
        self.used
            .get((s / 64) as usize)
            .is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    fn set(&mut self, s: u64, on: bool) {
        let w = (s / 64) as usize;
        if w >= self.used.len() {
            self.used.resize(w + 1, 0);
        }
        if on {
            self.used[w] |= 1 << (s % 64);
        } else {
            self.used[w] &= !(1 << (s % 64));
        }
    }

    /// Slot `s` became (`on`) or stopped being named by the map.
    fn named(&mut self, s: u64, on: bool) {
        let g = (s / SEGMENT) as usize;
        if g >= self.seg_live.len() {
            self.seg_live.resize(g + 1, 0);
        }
        if on {
            self.seg_live[g] += 1;
        } else {
            self.seg_live[g] -= 1;
        }
    }

    /// Frees slot `s` at once — unless its segment is being cleaned: then it is held until
    /// the next persist, so it cannot be handed out (and written) under the cleaner.
    fn free_or_hold(&mut self, s: u64) {
        self.pending.remove(&s);
        if self.cleaning.contains(&(s / SEGMENT)) {
            self.held.push(s as u32);
        } else {
            self.set(s, false);
        }
    }

    /// Segments wholly inside the file that hold no live page (free, or free once the next
    /// map is durable: the cleaner does not empty more than it needs while it waits for that).
    fn free_segments(&self) -> u64 {
        let whole = (self.n / SEGMENT) as usize;
        (0..whole)
            .filter(|&g| self.seg_live.get(g).is_none_or(|&l| l == 0))
            .count() as u64
    }

    fn may_grow(&self) -> bool {
        self.n < self.live + (self.live * self.free_pct / 100).max(self.min_room)
    }

    /// Takes free runs of at least `min_run` slots (or the rest of what is needed) going
    /// round the file once from the cursor.
    fn take_runs(&mut self, runs: &mut Vec<Run>, need: &mut u64, min_run: u64) {
        let n = self.n;
        if n == 0 {
            return;
        }
        let mut s = self.cursor % n;
        let mut scanned = 0u64;
        while *need > 0 && scanned < n {
            // Skip whole used words quickly.
            if s.is_multiple_of(64)
                && s + 64 <= n
                && self.used.get((s / 64) as usize) == Some(&u64::MAX)
            {
                s = (s + 64) % n;
                scanned += 64;
                continue;
            }
            if self.is_used(s) {
                s = (s + 1) % n;
                scanned += 1;
                continue;
            }
            let start = s;
            let mut len = 0;
            while start + len < n && len < *need && !self.is_used(start + len) {
                len += 1;
            }
            // A run cut short by the need is long enough; one ended by a used slot or the
            // file end must reach `min_run`.
            if len >= min_run.min(*need) {
                for i in 0..len {
                    self.set(start + i, true);
                }
                runs.push(Run { slot: start, len });
                *need -= len;
                self.cursor = start + len;
            }
            scanned += len.max(1);
            s = (start + len.max(1)) % n;
        }
    }

    fn grow(&mut self, runs: &mut Vec<Run>, need: &mut u64) {
        let start = self.n;
        for i in 0..*need {
            self.set(start + i, true);
        }
        runs.push(Run {
            slot: start,
            len: *need,
        });
        self.n += *need;
        self.cursor = self.n;
        *need = 0;
    }
}

/// The page map of one data file.
pub struct PageMap {
    path: PathBuf,
    /// Page id → slot + 1 (0: never written).
    map: RwLock<Vec<u32>>,
    slots: Mutex<Slots>,
    persist: Mutex<()>,
}

impl PageMap {
    /// Opens the map of a data file of `file_len` bytes. Without a map file the data file is
    /// taken to be laid out in place (page `n` in slot `n`: an empty file, or one written by a
    /// tierdb without page maps) and that map is made durable before anything is relocated.
    pub fn open(path: &Path, file_len: u64) -> io::Result<PageMap> {
        let file_slots = file_len.div_ceil(PAGE_SIZE as u64);
        let (entries, written) = match fs::read(path) {
            Ok(bytes) => (decode(&bytes, path)?, true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if file_slots > MAX_SLOTS {
                    return Err(io::Error::other(format!(
                        "{}: a data file of {file_slots} pages is past the page map's limit",
                        path.display()
                    )));
                }
                ((1..=file_slots as u32).collect(), false)
            }
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        };
        let mut s = Slots {
            used: Vec::new(),
            n: file_slots,
            live: 0,
            seg_live: Vec::new(),
            cleaning: Vec::new(),
            reading: std::collections::HashMap::new(),
            pending: std::collections::HashSet::new(),
            stuck: std::collections::HashSet::new(),
            held: Vec::new(),
            releasing: 0,
            cursor: 0,
            persisted: 0,
            free_pct: DEFAULT_FREE_PCT,
            min_room: GROW_SLACK,
        };
        for (page, &e) in entries.iter().enumerate() {
            if e == 0 {
                continue;
            }
            let slot = u64::from(e - 1);
            if slot >= file_slots {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: page {page} is in slot {slot}, past the data file's end ({file_slots} slots)",
                        path.display()
                    ),
                ));
            }
            if s.is_used(slot) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: slot {slot} is named twice", path.display()),
                ));
            }
            s.set(slot, true);
            s.named(slot, true);
            s.live += 1;
        }
        let m = PageMap {
            path: path.to_path_buf(),
            map: RwLock::new(entries),
            slots: Mutex::new(s),
            persist: Mutex::new(()),
        };
        if !written {
            // Nothing was relocated yet, so the data file needs no sync first.
            m.persist(|| Ok(()))?;
        }
        Ok(m)
    }

    /// The slot holding page `id`, if it was ever written.
    pub fn slot(&self, id: PageId) -> Option<u64> {
        let m = self.map.read();
        match m.get(usize::try_from(id.0).ok()?) {
            Some(&e) if e != 0 => Some(u64::from(e - 1)),
            _ => None,
        }
    }

    /// The slot holding page `id`, registered as being read until `end_read`: no persist
    /// frees it meanwhile (the cleaner may move the page; its old slot stays as it was).
    pub fn begin_read(&self, id: PageId) -> Option<u64> {
        let m = self.map.read();
        let slot = match m.get(usize::try_from(id.0).ok()?) {
            Some(&e) if e != 0 => u64::from(e - 1),
            _ => return None,
        };
        *self.slots.lock().reading.entry(slot).or_default() += 1;
        Some(slot)
    }

    /// The read of `slot` that `begin_read` registered is over.
    pub fn end_read(&self, slot: u64) {
        let mut s = self.slots.lock();
        if let Some(c) = s.reading.get_mut(&slot) {
            *c -= 1;
            if *c == 0 {
                s.reading.remove(&slot);
            }
        }
    }

    /// Hands out `n` free slots in as few runs as it can: runs of at least `MIN_RUN` slots
    /// going round from where the last allocation ended, then the file's end while the file
    /// is within its growth allowance, then any free slot, then the file's end regardless.
    pub(crate) fn allocate(&self, n: u64) -> io::Result<Vec<Run>> {
        let mut s = self.slots.lock();
        let n_before = s.n;
        let mut runs = Vec::new();
        let mut need = n;
        s.take_runs(&mut runs, &mut need, MIN_RUN);
        if need > 0 && s.may_grow() {
            s.grow(&mut runs, &mut need);
        }
        if need > 0 {
            s.take_runs(&mut runs, &mut need, 1);
        }
        if need > 0 {
            s.grow(&mut runs, &mut need);
        }
        if s.n > MAX_SLOTS {
            for r in &runs {
                for i in 0..r.len {
                    s.set(r.slot + i, false);
                }
            }
            s.n = n_before;
            return Err(io::Error::other(
                "the data file reached the page map's limit of 2^32 - 1 slots (64 TiB)",
            ));
        }
        for r in &runs {
            s.pending.extend(r.slot..r.slot + r.len);
        }
        Ok(runs)
    }

    /// Gives back slots whose write failed (no map names them).
    pub(crate) fn unallocate(&self, runs: &[Run]) {
        let mut s = self.slots.lock();
        for r in runs {
            for i in 0..r.len {
                s.free_or_hold(r.slot + i);
            }
        }
    }

    /// The pages `ids` (in order) were written to `runs` (in order) and the writes completed:
    /// the map names the new slots; the old ones are held until the next map file is durable.
    pub(crate) fn commit(&self, ids: &[PageId], runs: &[Run]) {
        let mut m = self.map.write();
        let mut s = self.slots.lock();
        let mut slots = runs.iter().flat_map(|r| r.slot..r.slot + r.len);
        for id in ids {
            let slot = slots.next().expect("one slot per page");
            let i = id.0 as usize;
            if i >= m.len() {
                m.resize(i + 1, 0);
            }
            let old = std::mem::replace(&mut m[i], slot as u32 + 1);
            s.pending.remove(&slot);
            s.named(slot, true);
            if old == 0 {
                s.live += 1;
            } else {
                s.named(u64::from(old - 1), false);
                s.held.push(old - 1);
            }
        }
    }

    /// Makes the map durable: takes a copy (and the slots held since the last copy), calls
    /// `sync_data` so every write the copy names is durable, writes the map file atomically,
    /// then frees the held slots (no durable map names them any more).
    pub fn persist(&self, sync_data: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let _p = self.persist.lock();
        let (copy, release, n) = {
            // No commit can run while the map is read-locked, so the held slots taken here are
            // exactly those the copy no longer names; the slots lock is not held for the copy.
            let m = self.map.read();
            let (release, n) = {
                let mut s = self.slots.lock();
                let release = std::mem::take(&mut s.held);
                s.releasing = release.len() as u64;
                (release, s.n)
            };
            (m.clone(), release, n)
        };
        let r = sync_data().and_then(|()| write_atomic(&self.path, &encode(&copy, n)));
        let mut s = self.slots.lock();
        s.releasing = 0;
        match r {
            Ok(()) => {
                for slot in release {
                    let at = u64::from(slot);
                    if s.cleaning.contains(&(at / SEGMENT)) || s.reading.contains_key(&at) {
                        // Still looked at: free after the next persist.
                        s.held.push(slot);
                    } else {
                        s.set(at, false);
                    }
                }
                s.persisted += 1;
                Ok(())
            }
            Err(e) => {
                // The old file may still be the durable one: keep holding its slots.
                s.held.extend(release);
                Err(io::Error::new(
                    e.kind(),
                    format!("{}: {e}", self.path.display()),
                ))
            }
        }
    }

    /// The cleaner's next segment, when the file has reached its room (`free_pct`) and fewer
    /// than `CLEAN_TARGET_FREE_SEGMENTS` segments are wholly free: the one with the fewest live pages (1..=`CLEAN_MAX_LIVE`). Its free slots are
    /// reserved (no batch lands there meanwhile) until `end_clean`. Returns the segment and
    /// its slot range within the file.
    pub(crate) fn begin_clean(&self) -> Option<Clean> {
        let mut s = self.slots.lock();
        // While the file may still grow, batches find long runs at its end: no cleaning (a
        // small or idle database is never rewritten behind its back).
        if s.may_grow() || s.free_segments() >= CLEAN_TARGET_FREE_SEGMENTS {
            return None;
        }
        let whole = (s.n / SEGMENT) as usize;
        let seg = s
            .seg_live
            .iter()
            .take(whole)
            .enumerate()
            .filter(|(g, &l)| {
                (1..=CLEAN_MAX_LIVE).contains(&l)
                    && !s.cleaning.contains(&(*g as u64))
                    && !s.stuck.contains(&(*g as u64))
            })
            .min_by_key(|(_, &l)| l)
            .map(|(g, _)| g as u64)?;
        s.cleaning.push(seg);
        let first = seg * SEGMENT;
        let reserved: Vec<u64> = (first..first + SEGMENT)
            .filter(|&slot| !s.is_used(slot))
            .collect();
        for &slot in &reserved {
            s.set(slot, true);
        }
        let skip = (first..first + SEGMENT)
            .filter(|slot| s.pending.contains(slot))
            .collect();
        Some(Clean {
            first,
            reserved,
            skip,
        })
    }

    /// Gives back the slots `begin_clean` reserved.
    pub(crate) fn end_clean(&self, c: Clean, moved: u64) {
        let mut s = self.slots.lock();
        let seg = c.first / SEGMENT;
        if moved == 0 && s.seg_live.get(seg as usize).is_some_and(|&l| l > 0) {
            s.stuck.insert(seg);
        }
        s.cleaning.retain(|&g| g != seg);
        for slot in c.reserved {
            s.set(slot, false);
        }
    }

    /// The cleaner copied pages `moves[i].0` from slot `moves[i].1` to `runs` (in order) and
    /// the writes completed: each page whose map entry still names its old slot now names the
    /// copy (the old slot is held like any other); a page written elsewhere meanwhile keeps its
    /// newer slot and the copy's slot is free at once (no map ever named it). Returns the
    /// pages moved.
    pub(crate) fn commit_moves(&self, moves: &[(PageId, u64)], runs: &[Run]) -> u64 {
        let mut m = self.map.write();
        let mut s = self.slots.lock();
        let mut slots = runs.iter().flat_map(|r| r.slot..r.slot + r.len);
        let mut moved = 0;
        for &(id, old) in moves {
            let slot = slots.next().expect("one slot per page");
            let e = m.get_mut(id.0 as usize);
            match e {
                Some(e) if *e == old as u32 + 1 => {
                    *e = slot as u32 + 1;
                    s.pending.remove(&slot);
                    s.named(slot, true);
                    s.named(old, false);
                    s.held.push(old as u32);
                    moved += 1;
                }
                _ => s.free_or_hold(slot),
            }
        }
        moved
    }

    /// Sets `relocating_free_space` (percent of the live pages; clamped to `FREE_PCT_RANGE`).
    pub fn set_free_space_pct(&self, pct: u64) {
        self.slots.lock().free_pct = pct.clamp(*FREE_PCT_RANGE.start(), *FREE_PCT_RANGE.end());
    }

    /// Sets the smallest room in slots (default `GROW_SLACK`, 16 MiB; a test seam).
    pub fn set_min_room(&self, slots: u64) {
        self.slots.lock().min_room = slots.max(SEGMENT);
    }

    pub fn free_space_pct(&self) -> u64 {
        self.slots.lock().free_pct
    }

    /// True when the slots held for the durable map are many (1/64 of the live pages, at
    /// least `PERSIST_HELD_MIN`): persisting now lets them be reused before the file grows.
    pub fn wants_persist(&self) -> bool {
        let s = self.slots.lock();
        s.held.len() as u64 > (s.live / 64).max(PERSIST_HELD_MIN)
    }

    pub fn stats(&self) -> MapStats {
        let s = self.slots.lock();
        MapStats {
            slots: s.n,
            pages: s.live,
            held: s.held.len() as u64 + s.releasing,
            persisted: s.persisted,
        }
    }
}

fn encode(entries: &[u32], slots: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(HEADER + entries.len() * 4 + 4);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    b.extend_from_slice(&slots.to_le_bytes());
    for e in entries {
        b.extend_from_slice(&e.to_le_bytes());
    }
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

fn decode(b: &[u8], path: &Path) -> io::Result<Vec<u32>> {
    let bad = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {what}", path.display()),
        )
    };
    if b.len() < HEADER + 4 || &b[..8] != MAGIC {
        return Err(bad("not a tierdb page map".into()));
    }
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version != VERSION {
        return Err(bad(format!(
            "page map version {version} (this binary reads {VERSION})"
        )));
    }
    let pages = u64::from_le_bytes(b[16..24].try_into().expect("8 bytes"));
    let want = u64::try_from(HEADER + 4)
        .ok()
        .and_then(|h| pages.checked_mul(4)?.checked_add(h));
    if want != Some(b.len() as u64) {
        return Err(bad(format!(
            "{} bytes for {pages} pages: truncated or corrupt",
            b.len()
        )));
    }
    let body = b.len() - 4;
    if crc32c::crc32c(&b[..body]) != u32_at(body) {
        return Err(bad("checksum mismatch".into()));
    }
    Ok(b[HEADER..body]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension("map.tmp");
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Reads every page a closed data directory's map names: `(page id, bytes)` in page order.
/// For tools and tests that look at a data file from outside the engine.
pub fn read_mapped_pages(data_dir: &Path) -> io::Result<Vec<(PageId, Vec<u8>)>> {
    let data = fs::read(data_dir.join(crate::storage::DATA_FILE))?;
    let map = PageMap::open(&data_dir.join(crate::storage::MAP_FILE), data.len() as u64)?;
    let m = map.map.read();
    let mut out = Vec::new();
    for (page, &e) in m.iter().enumerate() {
        if e == 0 {
            continue;
        }
        let at = (e as usize - 1) * PAGE_SIZE;
        let bytes = data
            .get(at..at + PAGE_SIZE)
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "slot past the end"))?;
        out.push((PageId(page as u64), bytes.to_vec()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(v: &[u64]) -> Vec<PageId> {
        v.iter().map(|&i| PageId(i)).collect()
    }

    #[test]
    fn a_data_file_without_a_map_is_read_in_place_and_gets_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tierdb.map");
        let m = PageMap::open(&p, 3 * PAGE_SIZE as u64).unwrap();
        assert!(p.exists());
        for i in 0..3 {
            assert_eq!(m.slot(PageId(i)), Some(i));
        }
        assert_eq!(m.slot(PageId(3)), None);
        let again = PageMap::open(&p, 3 * PAGE_SIZE as u64).unwrap();
        assert_eq!(again.slot(PageId(2)), Some(2));
    }

    #[test]
    fn a_relocated_page_keeps_its_old_slot_until_the_next_map_is_durable() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tierdb.map");
        let m = PageMap::open(&p, 4 * PAGE_SIZE as u64).unwrap();
        let runs = m.allocate(2).unwrap();
        assert!(
            runs.iter().all(|r| r.slot >= 4),
            "no free slot inside: {runs:?}"
        );
        m.commit(&ids(&[1, 3]), &runs);
        assert_eq!(m.stats().held, 2);
        // Slots 1 and 3 are still named by the durable map: not handed out.
        for _ in 0..100 {
            let r = m.allocate(1).unwrap();
            assert!(r.iter().all(|r| r.slot != 1 && r.slot != 3), "{r:?}");
            m.unallocate(&r);
        }
        // A crash now finds the old map.
        let before = PageMap::open(&p, 6 * PAGE_SIZE as u64).unwrap();
        assert_eq!(before.slot(PageId(1)), Some(1));
        let mut synced = false;
        m.persist(|| {
            synced = true;
            Ok(())
        })
        .unwrap();
        assert!(synced);
        assert_eq!(m.stats().held, 0);
        let after = PageMap::open(&p, 6 * PAGE_SIZE as u64).unwrap();
        assert_eq!(after.slot(PageId(1)), m.slot(PageId(1)));
        assert_ne!(after.slot(PageId(1)), Some(1));
    }

    #[test]
    fn a_failed_sync_keeps_the_held_slots() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tierdb.map");
        let m = PageMap::open(&p, 2 * PAGE_SIZE as u64).unwrap();
        let runs = m.allocate(1).unwrap();
        m.commit(&ids(&[0]), &runs);
        assert!(m.persist(|| Err(io::Error::other("disk gone"))).is_err());
        assert_eq!(m.stats().held, 1);
        let again = PageMap::open(&p, 3 * PAGE_SIZE as u64).unwrap();
        assert_eq!(
            again.slot(PageId(0)),
            Some(0),
            "the old map is still the durable one"
        );
    }

    #[test]
    fn corrupt_or_truncated_map_files_are_refused_with_the_path() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("tierdb.map");
        PageMap::open(&p, 2 * PAGE_SIZE as u64).unwrap();
        let good = fs::read(&p).unwrap();
        for cut in [0, 10, good.len() - 1] {
            fs::write(&p, &good[..cut]).unwrap();
            let e = PageMap::open(&p, 2 * PAGE_SIZE as u64).err().unwrap();
            assert!(e.to_string().contains("tierdb.map"), "{e}");
        }
        let mut flipped = good.clone();
        flipped[HEADER] ^= 1;
        fs::write(&p, &flipped).unwrap();
        let e = PageMap::open(&p, 2 * PAGE_SIZE as u64).err().unwrap();
        assert!(e.to_string().contains("checksum"), "{e}");
        // A map naming a slot past the file's end.
        fs::write(&p, &good).unwrap();
        let e = PageMap::open(&p, PAGE_SIZE as u64).err().unwrap();
        assert!(e.to_string().contains("past the data file"), "{e}");
    }

    #[test]
    fn batches_go_to_adjacent_free_slots() {
        let d = tempfile::tempdir().unwrap();
        let m = PageMap::open(&d.path().join("m"), 0).unwrap();
        let r = m.allocate(16).unwrap();
        assert_eq!(r, vec![Run { slot: 0, len: 16 }]);
        m.commit(&(0..16).map(PageId).collect::<Vec<_>>(), &r);
        let r = m.allocate(16).unwrap();
        assert_eq!(r, vec![Run { slot: 16, len: 16 }]);
        m.commit(&(0..16).map(PageId).collect::<Vec<_>>(), &r);
        m.persist(|| Ok(())).unwrap();
        // Slots 0..16 are free again and form one run.
        let r = m.allocate(16).unwrap();
        assert_eq!(r.len(), 1, "{r:?}");
    }

    #[test]
    fn the_cleaner_works_only_at_the_room_limit_on_the_emptiest_segment_and_loses_no_race() {
        let d = tempfile::tempdir().unwrap();
        // 4 segments, in place: pages 0..256 in slots 0..256.
        let m = PageMap::open(&d.path().join("m"), 4 * SEGMENT * PAGE_SIZE as u64).unwrap();
        m.set_free_space_pct(10);
        // Room left (256 slots < 256 + 1024): no cleaning.
        assert!(m.begin_clean().is_none());
        // Move 1..64 except page 5 out of segment 0, 100..120 out of segment 1; the file grows
        // past its room (GROW_SLACK).
        let moved: Vec<u64> = (0..64).filter(|&p| p != 5).chain(100..120).collect();
        for chunk in moved.chunks(16) {
            let runs = m.allocate(chunk.len() as u64).unwrap();
            m.commit(&ids(chunk), &runs);
        }
        // 2100 more pages, then every other one rewritten: the freed slots alternate, so no
        // segment is wholly free, and the file ends past its room.
        let big: Vec<u64> = (1000..3100).collect();
        let even: Vec<u64> = (1000..3100).step_by(2).collect();
        for chunk in big.chunks(16).chain(even.chunks(16)) {
            let runs = m.allocate(chunk.len() as u64).unwrap();
            m.commit(&ids(chunk), &runs);
        }
        m.persist(|| Ok(())).unwrap();
        let st = m.stats();
        assert!(st.slots >= st.pages + GROW_SLACK, "{st:?}");
        let c = m
            .begin_clean()
            .expect("at the room limit with few free segments");
        assert_eq!(c.first, 0, "segment 0 holds one live page, the fewest");
        // A second cleaner gets another segment.
        let c2 = m.begin_clean().expect("another segment");
        assert_ne!(c2.first, 0);
        m.end_clean(c2, 1);
        // Page 5 is rewritten by the pool while the cleaner copies it: the pool's slot stays.
        let r = m.allocate(1).unwrap();
        assert!(
            r.iter().all(|r| r.slot >= SEGMENT),
            "reserved slots are not handed out: {r:?}"
        );
        m.commit(&ids(&[5]), &r);
        let pool_slot = m.slot(PageId(5));
        let copy = m.allocate(1).unwrap();
        assert_eq!(m.commit_moves(&[(PageId(5), 5)], &copy), 0);
        assert_eq!(m.slot(PageId(5)), pool_slot);
        // A persist while the segment is cleaned keeps its slots held: page 5's old slot can
        // not come back to page 5 (or go to another page) under the cleaner's feet.
        m.persist(|| Ok(())).unwrap();
        assert!(
            m.stats().held >= 1,
            "slot 5 stays held while its segment is cleaned"
        );
        for _ in 0..200 {
            let r = m.allocate(1).unwrap();
            assert!(r.iter().all(|r| r.slot != 5), "{r:?}");
            m.unallocate(&r);
        }
        // A page still in its old slot moves.
        let copy2 = m.allocate(1).unwrap();
        assert_eq!(m.commit_moves(&[(PageId(64), 64)], &copy2), 1);
        assert_eq!(m.slot(PageId(64)), Some(copy2[0].slot));
        m.end_clean(c, 1);
        m.persist(|| Ok(())).unwrap();
        assert_eq!(m.stats().held, 0, "held slots free once cleaning is over");
    }

    #[test]
    fn a_cleaner_skips_slots_still_being_written_and_gives_up_on_a_stuck_segment() {
        let d = tempfile::tempdir().unwrap();
        let m = PageMap::open(&d.path().join("m"), 0).unwrap();
        m.set_free_space_pct(10);
        m.set_min_room(SEGMENT);
        // Segments 0..4 full of pages 0..256.
        let all: Vec<u64> = (0..256).collect();
        for chunk in all.chunks(16) {
            let runs = m.allocate(chunk.len() as u64).unwrap();
            m.commit(&ids(chunk), &runs);
        }
        // Pages 0..40 move on (segment 0 keeps 24 live pages) and 200..230 (segment 3 keeps
        // 34): the file reaches its room (256 + 64); the freed slots come back.
        for chunk in (0..40).chain(200..230).collect::<Vec<u64>>().chunks(8) {
            let runs = m.allocate(chunk.len() as u64).unwrap();
            m.commit(&ids(chunk), &runs);
        }
        m.persist(|| Ok(())).unwrap();
        // A batch is handed slots in segment 0 but its write has not landed yet.
        let inflight = m.allocate(8).unwrap();
        assert!(inflight.iter().all(|r| r.slot < SEGMENT), "{inflight:?}");
        let c = m.begin_clean().expect("segment 0 is the emptiest");
        assert_eq!(c.first, 0);
        let want: Vec<u64> = inflight
            .iter()
            .flat_map(|r| r.slot..r.slot + r.len)
            .collect();
        assert_eq!(c.skip, want, "slots under way are not copied");
        // The write fails: its slots stay held while the segment is cleaned.
        m.unallocate(&inflight);
        m.persist(|| Ok(())).unwrap();
        assert!(m.stats().held >= 8);
        // Nothing could be moved and live pages remain: not chosen again.
        m.end_clean(c, 0);
        assert!(m.begin_clean().is_none_or(|c| c.first != 0));
    }

    #[test]
    fn a_slot_being_read_is_not_freed_by_a_persist() {
        let d = tempfile::tempdir().unwrap();
        let m = PageMap::open(&d.path().join("m"), 2 * PAGE_SIZE as u64).unwrap();
        let slot = m.begin_read(PageId(1)).unwrap();
        assert_eq!(slot, 1);
        // The page moves (a cleaner) and a map is persisted while the read is in flight.
        let r = m.allocate(1).unwrap();
        m.commit_moves(&[(PageId(1), 1)], &r);
        m.persist(|| Ok(())).unwrap();
        for _ in 0..50 {
            let r = m.allocate(1).unwrap();
            assert!(
                r.iter().all(|r| r.slot != 1),
                "slot 1 handed out during a read: {r:?}"
            );
            m.unallocate(&r);
        }
        m.end_read(slot);
        m.persist(|| Ok(())).unwrap();
        assert_eq!(m.stats().held, 0);
    }

    proptest! {
        /// Whatever the writes and map files, no slot is named twice, no held slot is handed
        /// out, and reopening after a persist gives the same map.
        #[test]
        fn the_map_never_names_a_slot_twice_nor_reuses_a_durable_slot(
            ops in proptest::collection::vec((0u8..4, proptest::collection::vec(0u64..40, 1..20)), 1..60)
        ) {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("m");
            let m = PageMap::open(&p, 0).unwrap();
            let mut durable: Vec<u32> = Vec::new();
            for (op, pages) in ops {
                if op == 0 {
                    m.persist(|| Ok(())).unwrap();
                    durable = m.map.read().clone();
                    continue;
                }
                let mut pages = pages;
                pages.sort_unstable();
                pages.dedup();
                let runs = m.allocate(pages.len() as u64).unwrap();
                let got: u64 = runs.iter().map(|r| r.len).sum();
                prop_assert_eq!(got, pages.len() as u64);
                for r in &runs {
                    for s in r.slot..r.slot + r.len {
                        prop_assert!(!durable.contains(&(s as u32 + 1)), "durable slot {} reused", s);
                        prop_assert!(!m.map.read().contains(&(s as u32 + 1)), "live slot {} reused", s);
                    }
                }
                if op == 3 {
                    m.unallocate(&runs);
                } else {
                    m.commit(&ids(&pages), &runs);
                }
                let st = m.stats();
                prop_assert!(st.slots <= st.pages + (st.pages / 2).max(GROW_SLACK) + st.held + 20);
            }
            m.persist(|| Ok(())).unwrap();
            let n = m.stats().slots * PAGE_SIZE as u64;
            let again = PageMap::open(&p, n).unwrap();
            prop_assert_eq!(&*again.map.read(), &*m.map.read());
        }
    }
}
