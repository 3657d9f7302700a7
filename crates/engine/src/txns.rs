//! The table of active (writing) transactions and row-version visibility.
//!
//! A writing transaction registers here before its first change. For every key it changes it
//! records the FIRST before-image (the last committed version), so that readers who meet a
//! row written by an active transaction read that version instead (READ COMMITTED without
//! read locks). Readers check visibility while holding the leaf's shared latch, so a rollback
//! (which needs the exclusive latch to restore a row) cannot slip between their read of the
//! row and their look-up here.
//!
//! Read views (REPEATABLE READ, `START TRANSACTION WITH CONSISTENT SNAPSHOT`): a view is the
//! set of transactions whose changes it sees, fixed when it is opened (every id below the next
//! one except those active then, as InnoDB's read views). A reader meeting a row whose writer
//! the view does not see walks back through before-images — the writer's own while it runs,
//! then the ones *retained* here after it ended — to the version the view sees. A transaction
//! that ends while a view is open is retained (its before-images kept) until every view
//! opened before its end is closed; the SQL layer's purge of its delete-marks and stale index
//! entries waits as long (`txn::run_deferred`). A transaction whose commit is durable is
//! marked `committed` before its purge, so a view opened between that and its end counts it
//! as seen.
//!
//! Lock order: page latch → `shards` / `retained` → `ActiveTxn::writes`; `order` is never
//! taken with a page latch held. Must never: report a transaction as finished before its
//! changes are committed or rolled back; drop a retained transaction some open view may still
//! need.

use crate::rowcodec::{header, FLAG_DELETED};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// key → before-image (None = the key did not exist).
type BeforeImages = HashMap<Vec<u8>, Option<Vec<u8>>>;

pub struct ActiveTxn {
    pub id: u64,
    /// tree root → key → before-image (None = the key did not exist).
    writes: Mutex<HashMap<u64, BeforeImages>>,
    /// Set once the commit is durable (`committed_unseen_by_none`): views opened from then on
    /// see this transaction although it has not ended yet.
    committed: std::sync::atomic::AtomicBool,
}

impl ActiveTxn {
    /// Remembers the before-image of `key` unless one is already recorded; true if it did.
    pub fn record_before(&self, tree: u64, key: &[u8], before: Option<&[u8]>) -> bool {
        let mut w = self.writes.lock();
        let t = w.entry(tree).or_default();
        if t.contains_key(key) {
            return false;
        }
        t.insert(key.to_vec(), before.map(|b| b.to_vec()));
        true
    }
    fn before(&self, tree: u64, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.writes
            .lock()
            .get(&tree)
            .and_then(|t| t.get(key).cloned())
    }
}

const SHARDS: usize = 16;
/// Most versions one read walks back through (a longer chain is reported as corrupt).
const MAX_CHAIN: usize = 1 << 20;

/// The transactions a consistent read sees: every id below `high` except `active` (the ones
/// running when the view was opened), plus the reader's own.
pub struct ReadView {
    low: u64,
    high: u64,
    active: Vec<u64>,
    /// Order of opening among views and transaction ends (see `ActiveTxns::end`).
    seq: u64,
}

impl ReadView {
    pub fn sees(&self, writer: u64) -> bool {
        writer < self.low || (writer < self.high && self.active.binary_search(&writer).is_err())
    }
    /// The view was opened before a table handle stamped `since` existed.
    pub fn predates(&self, since: u64) -> bool {
        since > self.seq
    }
}

/// How a read chooses row versions: `me`'s own changes and, without a view, the last
/// committed version of every other row (READ COMMITTED); with one, the version the view sees.
#[derive(Clone, Default)]
pub struct ReadAs {
    pub me: u64,
    pub view: Option<Arc<ReadView>>,
}

struct Order {
    next_id: u64,
    /// id → first LSN of each active transaction.
    active: BTreeMap<u64, u64>,
    /// Clock of view openings and retained ends (`ReadView::seq`, `Retained::seq`).
    seq: u64,
    /// seq → number of open views opened at that seq.
    views: BTreeMap<u64, usize>,
}

struct Retained {
    txn: Arc<ActiveTxn>,
    /// The clock when it ended: views with a larger seq see it.
    seq: u64,
}

pub struct ActiveTxns {
    shards: Vec<RwLock<HashMap<u64, Arc<ActiveTxn>>>>,
    /// next id, the active ids (for the oldest) and the open views; one lock so that an id is
    /// never handed out without being active and a view's active set is exact.
    order: Mutex<Order>,
    /// Rows written by a transaction id below this are committed (fast path).
    oldest_active: AtomicU64,
    /// Ended transactions some open view may not see, by id.
    retained: RwLock<HashMap<u64, Retained>>,
    /// Number of open views (fast check on every commit).
    open_views: AtomicU64,
    /// Bytes of before-images held by retained transactions (keys, values, 32 bytes each).
    retained_bytes: AtomicU64,
    /// Most `retained_bytes` before the oldest views are expired (0 = no limit).
    history_limit: AtomicU64,
    /// Views opened at a seq below this are expired: their reads fail (`Error::ReadViewTooOld`).
    expired_below: AtomicU64,
    /// Views expired so far.
    expired_views: AtomicU64,
}

impl ActiveTxns {
    pub fn new(next_id: u64) -> ActiveTxns {
        ActiveTxns {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            order: Mutex::new(Order {
                next_id: next_id.max(1),
                active: BTreeMap::new(),
                seq: 0,
                views: BTreeMap::new(),
            }),
            oldest_active: AtomicU64::new(u64::MAX),
            retained: RwLock::new(HashMap::new()),
            open_views: AtomicU64::new(0),
            retained_bytes: AtomicU64::new(0),
            history_limit: AtomicU64::new(0),
            expired_below: AtomicU64::new(0),
            expired_views: AtomicU64::new(0),
        }
    }

    pub fn set_history_limit(&self, bytes: u64) {
        self.history_limit.store(bytes, Ordering::Relaxed);
    }

    pub fn history_limit(&self) -> u64 {
        self.history_limit.load(Ordering::Relaxed)
    }

    pub fn expired_views(&self) -> u64 {
        self.expired_views.load(Ordering::Relaxed)
    }

    /// The view was expired to bound the history (its reads may have lost what they need).
    pub fn view_expired(&self, view: &ReadView) -> bool {
        view.seq < self.expired_below.load(Ordering::SeqCst)
    }

    /// While the retained history is over the limit, expires the oldest open views (a reader
    /// of an expired view gets `ReadViewTooOld` from its next read) and forgets what only
    /// they needed. Returns the new horizon when a view was expired (the caller runs the
    /// purges deferred below it).
    pub fn trim_history(&self) -> Option<u64> {
        let limit = self.history_limit.load(Ordering::Relaxed);
        let over = || limit > 0 && self.retained_bytes.load(Ordering::Relaxed) > limit;
        let mut horizon = None;
        while over() {
            let h = {
                let mut o = self.order.lock();
                let Some((&seq, &n)) = o.views.iter().next() else {
                    break;
                };
                o.views.remove(&seq);
                // Expired before anything it needs is forgotten: its readers check after
                // each read, so a read that raced with the pruning is never returned.
                self.expired_below.fetch_max(seq + 1, Ordering::SeqCst);
                self.open_views.fetch_sub(n as u64, Ordering::SeqCst);
                self.expired_views.fetch_add(n as u64, Ordering::Relaxed);
                tracing::warn!(
                    views = n,
                    history_bytes = self.retained_bytes.load(Ordering::Relaxed),
                    limit,
                    "read view expired: the history it needs outgrew read_view_history_limit"
                );
                Self::horizon_of(&o)
            };
            self.prune(h);
            horizon = Some(h);
        }
        horizon
    }

    /// Forgets the retained transactions no view opened at or after `horizon` needs.
    fn prune(&self, horizon: u64) {
        // A transaction retained at clock c is needed by the views with seq <= c.
        let mut r = self.retained.write();
        r.retain(|_, t| {
            let keep = t.seq >= horizon;
            if !keep {
                self.retained_bytes
                    .fetch_sub(t.txn.bytes(), Ordering::Relaxed);
            }
            keep
        });
    }

    pub fn begin(&self, first_lsn: u64) -> Arc<ActiveTxn> {
        let mut o = self.order.lock();
        let id = o.next_id;
        o.next_id += 1;
        let t = Arc::new(ActiveTxn {
            id,
            writes: Mutex::new(HashMap::new()),
            committed: Default::default(),
        });
        self.shards[(id as usize) % SHARDS]
            .write()
            .insert(id, t.clone());
        o.active.insert(id, first_lsn);
        let oldest = o.active.keys().next().copied().unwrap_or(u64::MAX);
        self.oldest_active.store(oldest, Ordering::Release);
        t
    }

    /// Called once the commit of `t` is durable, before its purge: `t` is seen by every view
    /// opened from here on. True: no view is open and its purge may run at once. False: a
    /// view that may not see `t` is open; its purge must wait (`end` retains it).
    pub fn committed_unseen_by_none(&self, t: &ActiveTxn) -> bool {
        // No lock on the commit path: flag first, then look for views (both SeqCst). A view
        // opener raises `open_views` before it reads the flags, so either it sees the flag
        // (and counts `t` as seen) or this load sees its view (and the purge waits).
        t.committed.store(true, Ordering::SeqCst);
        self.open_views.load(Ordering::SeqCst) == 0
    }

    /// Transaction `id` ended (`committed`: false for a rollback, whose rows are restored).
    /// Returns the clock value it is retained under when a view that may not see it is open
    /// (the caller defers its purge until `close_view` returns a horizon above it), else
    /// None.
    pub fn end(&self, id: u64, committed: bool) -> Option<u64> {
        let mut o = self.order.lock();
        let mut retained = None;
        if committed && !o.views.is_empty() {
            if let Some(t) = self.shards[(id as usize) % SHARDS].read().get(&id).cloned() {
                let bytes = t.bytes();
                self.retained_bytes.fetch_add(bytes, Ordering::Relaxed);
                // Into `retained` before it leaves the shard: a reader always finds it in one.
                self.retained
                    .write()
                    .insert(id, Retained { txn: t, seq: o.seq });
                retained = Some(o.seq);
            }
        }
        self.shards[(id as usize) % SHARDS].write().remove(&id);
        o.active.remove(&id);
        let oldest = o.active.keys().next().copied().unwrap_or(u64::MAX);
        self.oldest_active.store(oldest, Ordering::Release);
        retained
    }

    /// Opens a read view: it sees every transaction committed so far (and those whose commit
    /// is durable with their purge under way), none active now, none begun later.
    pub fn open_view(&self) -> Arc<ReadView> {
        let mut o = self.order.lock();
        o.seq += 1;
        let seq = o.seq;
        *o.views.entry(seq).or_default() += 1;
        self.open_views.fetch_add(1, Ordering::SeqCst);
        let active: Vec<u64> = o
            .active
            .keys()
            .copied()
            .filter(|id| {
                self.shards[(*id as usize) % SHARDS]
                    .read()
                    .get(id)
                    .is_none_or(|t| !t.committed.load(Ordering::SeqCst))
            })
            .collect();
        Arc::new(ReadView {
            low: active.first().copied().unwrap_or(o.next_id),
            high: o.next_id,
            active,
            seq,
        })
    }

    /// Closes `view`. Returns the horizon (`horizon_of`): retained transactions that ended
    /// before it are forgotten here, and the caller runs the purges deferred under those
    /// values.
    pub fn close_view(&self, view: &ReadView) -> u64 {
        let horizon = {
            let mut o = self.order.lock();
            if let Some(n) = o.views.get_mut(&view.seq) {
                *n -= 1;
                if *n == 0 {
                    o.views.remove(&view.seq);
                }
                self.open_views.fetch_sub(1, Ordering::Relaxed);
            }
            Self::horizon_of(&o)
        };
        self.prune(horizon);
        horizon
    }

    /// The seq of the oldest open view, or with none open the next seq: a transaction
    /// retained (and a purge deferred) under a smaller clock value is needed by no view open
    /// now or opened later. Never `u64::MAX`: a horizon used after the lock is let go must
    /// not cover views and retained transactions that come meanwhile.
    fn horizon_of(o: &Order) -> u64 {
        o.views.keys().next().copied().unwrap_or(o.seq + 1)
    }

    /// The current horizon (see `horizon_of`).
    pub fn horizon(&self) -> u64 {
        Self::horizon_of(&self.order.lock())
    }

    /// Number of ended transactions kept for open views, and their before-images' bytes.
    pub fn history(&self) -> (u64, u64) {
        (
            self.retained.read().len() as u64,
            self.retained_bytes.load(Ordering::Relaxed),
        )
    }

    pub fn open_views(&self) -> u64 {
        self.open_views.load(Ordering::Relaxed)
    }

    pub fn get(&self, id: u64) -> Option<Arc<ActiveTxn>> {
        if id < self.oldest_active.load(Ordering::Acquire) {
            return None;
        }
        self.shards[(id as usize) % SHARDS].read().get(&id).cloned()
    }

    /// `writer` is running and may still roll back (all of it or to a savepoint, bringing
    /// back versions no before-image records).
    pub fn may_roll_back(&self, writer: u64) -> bool {
        self.get(writer)
            .is_some_and(|t| !t.committed.load(Ordering::SeqCst))
    }

    /// The before-image transaction `writer` recorded for `key` of `tree`, running or
    /// retained: Some(None) when the key did not exist before it, None when unknown.
    fn before_of(&self, writer: u64, tree: u64, key: &[u8]) -> Option<Option<Vec<u8>>> {
        if let Some(t) = self.shards[(writer as usize) % SHARDS].read().get(&writer) {
            return t.before(tree, key);
        }
        self.retained
            .read()
            .get(&writer)
            .and_then(|r| r.txn.before(tree, key))
    }

    /// Calls `f` with the stored version of a row and then each older version kept for
    /// readers (before-images of running and retained writers), newest first, while `f`
    /// returns false. Delete-marked versions are passed too. True if `f` returned true.
    pub fn any_version(
        &self,
        tree: u64,
        key: &[u8],
        stored: &[u8],
        mut f: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        let mut cur: Vec<u8>;
        if f(stored) {
            return true;
        }
        let Some((_, mut w)) = header(stored) else {
            return false;
        };
        for _ in 0..MAX_CHAIN {
            match self.before_of(w, tree, key) {
                Some(Some(b)) => {
                    cur = b;
                    if f(&cur) {
                        return true;
                    }
                    match header(&cur) {
                        Some((_, next)) if next != w => w = next,
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
        false
    }

    /// Smallest `first_lsn` of the active transactions.
    pub fn min_first_lsn(&self) -> Option<u64> {
        self.order.lock().active.values().min().copied()
    }

    /// The id the next transaction will get: every transaction active now has a smaller one.
    pub fn next_id(&self) -> u64 {
        self.order.lock().next_id
    }

    /// A clock value for a table handle whose trees are new (a rebuild, an index build, a new
    /// table): views opened before it cannot read through that handle (`ReadView::predates`).
    pub fn stamp(&self) -> u64 {
        let mut o = self.order.lock();
        o.seq += 1;
        o.seq
    }

    /// Smallest id of an active transaction (`u64::MAX` when none is active).
    pub fn oldest_active(&self) -> u64 {
        self.oldest_active.load(Ordering::Acquire)
    }

    pub fn count(&self) -> usize {
        self.order.lock().active.len()
    }

    /// The version of a stored row that the reader sees: the stored bytes, the before-image
    /// of an active writer (or, with a view, the version the view sees), or nothing (absent or
    /// deleted).
    pub fn visible<'a>(&self, r: &ReadAs, tree: u64, key: &[u8], stored: &'a [u8]) -> Visible<'a> {
        let me = r.me;
        if let Some(view) = &r.view {
            return self.visible_in_view(me, view, tree, key, stored);
        }
        let Some((flags, writer)) = header(stored) else {
            return Visible::Corrupt;
        };
        if writer != me {
            if let Some(t) = self.get(writer) {
                if let Some(before) = t.before(tree, key) {
                    return match before {
                        Some(b) if header(&b).is_some_and(|(f, _)| f & FLAG_DELETED == 0) => {
                            Visible::Owned(b)
                        }
                        Some(b) if header(&b).is_none() => Visible::Corrupt,
                        _ => Visible::None,
                    };
                }
            }
        }
        if flags & FLAG_DELETED != 0 {
            Visible::None
        } else {
            Visible::Stored(stored)
        }
    }
}

impl ActiveTxns {
    fn visible_in_view<'a>(
        &self,
        me: u64,
        view: &ReadView,
        tree: u64,
        key: &[u8],
        stored: &'a [u8],
    ) -> Visible<'a> {
        let shown = |flags: u8| flags & FLAG_DELETED == 0;
        let Some((flags, mut writer)) = header(stored) else {
            return Visible::Corrupt;
        };
        if writer == me || view.sees(writer) {
            return if shown(flags) {
                Visible::Stored(stored)
            } else {
                Visible::None
            };
        }
        for _ in 0..MAX_CHAIN {
            match self.before_of(writer, tree, key) {
                // The key did not exist before the first writer the view does not see.
                Some(None) => return Visible::None,
                Some(Some(b)) => {
                    let Some((f, w)) = header(&b) else {
                        return Visible::Corrupt;
                    };
                    if w == me || view.sees(w) {
                        return if shown(f) {
                            Visible::Owned(b)
                        } else {
                            Visible::None
                        };
                    }
                    if w == writer {
                        return Visible::Corrupt;
                    }
                    writer = w;
                }
                // Unknown writer: its history was let go (an expired view; the reader's
                // `still_valid` check turns this into ReadViewTooOld).
                None => return Visible::Corrupt,
            }
        }
        Visible::Corrupt
    }
}

impl ActiveTxn {
    /// Bytes held by the recorded before-images (keys and values).
    fn bytes(&self) -> u64 {
        self.writes
            .lock()
            .values()
            .flat_map(|t| t.iter())
            .map(|(k, v)| (k.len() + v.as_ref().map_or(0, |v| v.len()) + 32) as u64)
            .sum()
    }
}

pub enum Visible<'a> {
    None,
    Stored(&'a [u8]),
    Owned(Vec<u8>),
    Corrupt,
}

#[cfg(test)]
mod tests {
    //! The horizon a view's closer computes is used after the lock is let go: it must not
    //! cover a view opened, or a transaction retained, in between.
    use super::*;

    #[test]
    fn a_stale_horizon_never_forgets_what_a_newer_view_needs() {
        let a = ActiveTxns::new(1);
        let v1 = a.open_view();
        let stale = a.close_view(&v1);
        assert_ne!(stale, u64::MAX);
        // Meanwhile: a view opens, and a transaction it does not see ends.
        let v2 = a.open_view();
        let t = a.begin(0);
        t.record_before(1, b"k", Some(b"old-version-bytes"));
        let clock = a.end(t.id, true).expect("retained for the open view");
        assert!(
            clock >= stale,
            "retained under {clock}, stale horizon {stale}"
        );
        // The first closer prunes with its stale horizon: the newer view keeps its history.
        a.prune(stale);
        assert_eq!(a.history().0, 1);
        assert!(a.before_of(t.id, 1, b"k").is_some());
        let h = a.close_view(&v2);
        assert!(h > clock);
        assert_eq!(a.history().0, 0);
    }
}
