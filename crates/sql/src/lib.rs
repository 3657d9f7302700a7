//! tierdb-sql: parse, plan and run SQL on the engine facade.
pub mod result;
