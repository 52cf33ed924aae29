//! drive models (in progress)
