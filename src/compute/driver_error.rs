//! A CUDA driver call's error as the crate's: the driver's error kept as the source
//! ([`Error::Driver`]), so a caller can match its code and a log shows the driver's words.
//! Out of memory is told apart where memory is asked for (`cuda.rs`'s allocations).

use cudarc::driver::DriverError;

use crate::error::Error;

/// The crate error of a driver error.
pub fn gpu_err(e: DriverError) -> Error {
    Error::Driver(e)
}
