//! Typed engine errors. The server maps each to a MySQL error code (see `Error::mysql_code`).

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("Unknown database '{0}'")]
    NoSuchDatabase(String),
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    #[error("Table '{db}.{table}' doesn't exist")]
    NoSuchTable { db: String, table: String },
    #[error("Table '{0}' already exists")]
    TableExists(String),
    #[error("Duplicate key name '{0}'")]
    IndexExists(String),
    #[error("Duplicate entry '{key}' for key '{index}'")]
    DuplicateKey { key: String, index: String },
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    #[error("Table definition has changed, please retry transaction")]
    TableDefinitionChanged,
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// A lock wait ended by KILL QUERY / KILL CONNECTION.
    #[error("Query execution was interrupted")]
    Interrupted,
    #[error("This transaction's read view was released: the row history it needed grew past read_view_history_limit; try restarting transaction")]
    ReadViewTooOld,
    #[error("Field '{0}' doesn't have a default value")]
    NoDefault(String),
    #[error("Column '{0}' cannot be null")]
    NotNull(String),
    /// The AUTO_INCREMENT counter is used up (it reached 2^63 - 1).
    #[error("Failed to read auto-increment value from storage engine")]
    AutoIncrementExhausted,
    #[error("Data truncated for column '{column}' at row {row}")]
    DataTruncated { column: String, row: u64 },
    #[error("Row size too large ({size} bytes; the maximum is {max})")]
    RowTooLarge { size: usize, max: usize },
    #[error("Variable '{name}' can't be set to the value of '{value}' ({why})")]
    BadValue {
        name: String,
        value: String,
        why: String,
    },
    /// A transaction's binary-log events exceed what one commit record holds.
    #[error("Multi-statement transaction required more than 'max_binlog_cache_size' bytes of storage; increase this mysqld variable and try again")]
    BinlogCacheFull,
    /// The running transactions' row locks, undo entries, before-images and binary-log
    /// changes passed `transaction_memory_limit`, this transaction holding a good share.
    #[error("The total number of locks exceeds the lock table size: running transactions hold {total} bytes of row locks, undo and binary-log changes ({held} of them this transaction's), over transaction_memory_limit ({limit}); the transaction was rolled back: change fewer rows per transaction or raise the limit")]
    TransactionMemoryFull { held: u64, total: u64, limit: u64 },
    #[error("This version of tierdb doesn't yet support '{0}'")]
    NotSupported(String),
    #[error("storage I/O error: {0}")]
    Io(String),
    #[error("corrupt data: {0}")]
    Corrupt(String),
    #[error("the engine refuses writes after an earlier I/O failure ({0}); restart the server")]
    Poisoned(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// MySQL error number and SQLSTATE for the protocol edge.
    pub fn mysql_code(&self) -> (u16, &'static str) {
        match self {
            Error::NoSuchDatabase(_) => (1049, "42000"),
            Error::DatabaseExists(_) => (1007, "HY000"),
            Error::NoSuchTable { .. } => (1146, "42S02"),
            Error::TableExists(_) => (1050, "42S01"),
            Error::IndexExists(_) => (1061, "42000"),
            Error::DuplicateKey { .. } => (1062, "23000"),
            Error::Deadlock => (1213, "40001"),
            Error::TableDefinitionChanged => (1412, "HY000"),
            Error::LockWaitTimeout => (1205, "HY000"),
            Error::BinlogCacheFull => (1197, "HY000"),
            Error::TransactionMemoryFull { .. } => (1206, "HY000"),
            Error::Interrupted => (1317, "70100"),
            Error::ReadViewTooOld => (1105, "HY000"),
            Error::NoDefault(_) => (1364, "HY000"),
            Error::NotNull(_) => (1048, "23000"),
            Error::AutoIncrementExhausted => (1467, "HY000"),
            Error::DataTruncated { .. } => (1265, "01000"),
            Error::RowTooLarge { .. } => (1118, "42000"),
            Error::NotSupported(_) => (1235, "42000"),
            Error::BadValue { .. } => (1231, "42000"),
            Error::Io(_) | Error::Poisoned(_) => (1030, "HY000"),
            Error::Corrupt(_) => (1712, "HY000"),
            Error::Internal(_) => (1815, "HY000"),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
