"""What "valid" means, pure and I/O-free: failures with JSON-Pointer paths, contracts, slice/splice/merge."""
