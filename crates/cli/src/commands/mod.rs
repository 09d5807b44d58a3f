//! One module per command, or group of commands, of the binary: each turns
//! its flags into the library's configs, calls the library, and writes
//! what it returns. What several share is in [`crate::common`].

pub mod audit;
pub mod cluster;
pub mod compare;
pub mod dataflow;
pub mod eval;
pub mod extract;
pub mod index;
pub mod lost_and_found;
pub mod manual;
pub mod neighbors;
pub mod serve;
