//! Server status counters (`SHOW GLOBAL STATUS`): Questions, Com_* per statement kind,
//! connections, bytes. Lock-free (relaxed atomics: they are statistics, not invariants).
//!
//! Must never: block a statement or allocate on the counting path.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($($id:ident => $name:expr),* $(,)?) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Counter { $($id),* }
        pub const COUNTER_NAMES: &[&str] = &[$($name),*];
    };
}

counters! {
    Questions => "Questions",
    Queries => "Queries",
    ComSelect => "Com_select",
    ComInsert => "Com_insert",
    ComUpdate => "Com_update",
    ComDelete => "Com_delete",
    ComReplace => "Com_replace",
    ComLoad => "Com_load",
    ComBegin => "Com_begin",
    ComCommit => "Com_commit",
    ComRollback => "Com_rollback",
    ComSavepoint => "Com_savepoint",
    ComRollbackToSavepoint => "Com_rollback_to_savepoint",
    ComReleaseSavepoint => "Com_release_savepoint",
    ComSet => "Com_set_option",
    ComShow => "Com_show_other",
    ComCreateTable => "Com_create_table",
    ComDropTable => "Com_drop_table",
    ComCreateView => "Com_create_view",
    ComDropView => "Com_drop_view",
    ComCreateDb => "Com_create_db",
    ComDropDb => "Com_drop_db",
    ComCreateIndex => "Com_create_index",
    ComDropIndex => "Com_drop_index",
    ComAnalyze => "Com_analyze",
    ComOptimize => "Com_optimize",
    ComCheck => "Com_check",
    ComRepair => "Com_repair",
    ComChangeDb => "Com_change_db",
    ComStmtPrepare => "Com_stmt_prepare",
    ComStmtExecute => "Com_stmt_execute",
    ComStmtClose => "Com_stmt_close",
    ComStmtReset => "Com_stmt_reset",
    ComPrepareSql => "Com_prepare_sql",
    ComExecuteSql => "Com_execute_sql",
    ComDeallocSql => "Com_dealloc_sql",
    ComExplain => "Com_explain",
    ComTruncate => "Com_truncate",
    ComAlterTable => "Com_alter_table",
    ComRenameTable => "Com_rename_table",
    ComLockTables => "Com_lock_tables",
    ComUnlockTables => "Com_unlock_tables",
    ComFlush => "Com_flush",
    ComCreateUser => "Com_create_user",
    ComAlterUser => "Com_alter_user",
    ComDropUser => "Com_drop_user",
    ComRenameUser => "Com_rename_user",
    ComGrant => "Com_grant",
    ComRevoke => "Com_revoke",
    ComRevokeAll => "Com_revoke_all",
    ComShowGrants => "Com_show_grants",
    ComShowCreateUser => "Com_show_create_user",
    AccessDenied => "Access_denied_errors",
    Connections => "Connections",
    BytesReceived => "Bytes_received",
    BytesSent => "Bytes_sent",
    HandlerCommit => "Handler_commit",
    HandlerRollback => "Handler_rollback",
    HandlerSavepoint => "Handler_savepoint",
    HandlerSavepointRollback => "Handler_savepoint_rollback",
    Deadlocks => "Innodb_deadlocks",
    LockWaitTimeouts => "Tierdb_lock_wait_timeouts",
    SlowQueries => "Slow_queries",
    MaxUsedConnections => "Max_used_connections",
}

pub const N_COUNTERS: usize = COUNTER_NAMES.len();

/// One padded atomic per counter (64-thread runs would otherwise bounce one cache line).
#[repr(align(64))]
#[derive(Default)]
struct Padded(AtomicU64);

pub struct Counters {
    c: Vec<Padded>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters {
            c: (0..N_COUNTERS).map(|_| Padded::default()).collect(),
        }
    }
}

impl Counters {
    pub fn add(&self, c: Counter, n: u64) {
        if let Some(p) = self.c.get(c as usize) {
            p.0.fetch_add(n, Ordering::Relaxed);
        }
    }
    pub fn inc(&self, c: Counter) {
        self.add(c, 1);
    }
    pub fn get(&self, c: Counter) -> u64 {
        self.c
            .get(c as usize)
            .map(|p| p.0.load(Ordering::Relaxed))
            .unwrap_or(0)
    }
    pub fn raise_to(&self, c: Counter, v: u64) {
        if let Some(p) = self.c.get(c as usize) {
            p.0.fetch_max(v, Ordering::Relaxed);
        }
    }
    /// (name, value) for every counter.
    pub fn snapshot(&self) -> Vec<(String, String)> {
        COUNTER_NAMES
            .iter()
            .zip(self.c.iter())
            .map(|(n, p)| (n.to_string(), p.0.load(Ordering::Relaxed).to_string()))
            .collect()
    }
}
