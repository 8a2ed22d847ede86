"""The Redis job store: specs, engine states, slice replies, results and the watchdog's lists, keyed by job
id."""
