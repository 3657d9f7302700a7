//! The MySQL client/server protocol, written against the `Backend`/`Service` seam.
//!
//! Owns: everything between socket bytes and `Backend` calls — framing, handshake, text and
//! binary result sets, command dispatch.
//! Must never: know about the SQL layer's internals or the engine; panic on client input.

pub mod backend;
pub mod binary;
pub mod codec;
mod commands;
pub mod connection;
pub mod constants;
pub mod handshake;
pub mod packet;
pub mod response;
pub mod testing;
pub mod text;

pub use backend::{Backend, Credential, Service};
pub use connection::{serve, ConnEnd, ReadPhase};
